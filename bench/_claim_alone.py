"""The durable claim's commit alone, against one ``fdatasync`` of the same kind of log.

Two SQLite stores in the bench file's directory, one with durable claims (as shipped), one
without (``<file>-alone-durable.db``, ``<file>-alone-plain.db``). Each round writes on each
store what precedes a claim in a cycle (``FILLERS`` small writes, at ``NORMAL``: frames in the
log not yet synced), then commits one claim, timed. On the plain store the claim is followed by
one ``fdatasync`` of that store's own write-ahead log, timed apart: what makes those frames and
that claim durable from outside SQLite. ``claim_alone_ratio`` = (durable claim - plain claim) /
that sync: the durable claim's price in syncs of its log (goal: at most 1.5). The files are
removed at the end.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from storage import ClaimRecord, StateChange, Storage, create_storage, utcnow

FILLERS = 3
"""Small writes before each claim (a cycle commits three before its claim)."""
FILLER = "y" * 3000


class ClaimAlone:
    """The durable claim and the plain claim plus a log sync, each round on its own stores."""

    def __init__(self, path: Path) -> None:
        kinds = ("durable", "plain")
        self._files = [path.with_name(f"{path.stem}-alone-{kind}{path.suffix}") for kind in kinds]
        self._durable = create_storage(f"sqlite+aiosqlite:///{self._files[0]}")
        self._plain = create_storage(f"sqlite+aiosqlite:///{self._files[1]}", durable_claims=False)
        self._log: int | None = None
        self.durable_ms: list[float] = []
        self.plain_ms: list[float] = []
        self.log_sync_ms: list[float] = []

    async def once(self, n: str) -> None:
        """One round: the durable claim, then the plain claim and its log's sync."""
        self.durable_ms.append(await _claim(self._durable, n))
        self.plain_ms.append(await _claim(self._plain, n))
        if self._log is None:
            self._log = os.open(f"{self._files[1]}-wal", os.O_RDONLY)
        started = time.perf_counter()
        os.fdatasync(self._log)
        self.log_sync_ms.append((time.perf_counter() - started) * 1000)

    async def close(self) -> None:
        if self._log is not None:
            os.close(self._log)
        await self._durable.close()
        await self._plain.close()
        _remove(self._files)

    def figure(self, skip: int) -> dict[str, Any]:
        """``claim_alone_durable_ms``, ``claim_alone_ms``, ``log_sync_ms``, ``claim_alone_ratio``
        (medians of the rounds after the first ``skip``)."""
        if len(self.durable_ms) <= skip:
            return {}
        durable = statistics.median(self.durable_ms[skip:])
        plain = statistics.median(self.plain_ms[skip:])
        sync = statistics.median(self.log_sync_ms[skip:])
        return {
            "claim_alone_durable_ms": round(durable, 3),
            "claim_alone_ms": round(plain, 3),
            "log_sync_ms": round(sync, 4),
            "claim_alone_ratio": round((durable - plain) / sync, 2) if sync > 0 else None,
        }


def _remove(files: list[Path]) -> None:
    for file in files:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{file}{suffix}").unlink(missing_ok=True)


async def _claim(store: Storage, n: str) -> float:
    """``FILLERS`` writes, then one claim commit: its ms."""
    for k in range(FILLERS):
        await store.add_if_absent(f"filler-{n}-{k}", FILLER, 3600)
    record = ClaimRecord(
        run_id=f"alone-{n}",
        key="call#0",
        tool_call_id="call",
        decision="approved",
        decided_by="U1",
        decided_at=utcnow(),
    )
    started = time.perf_counter()
    await store.commit(StateChange(claim=record))
    return (time.perf_counter() - started) * 1000
