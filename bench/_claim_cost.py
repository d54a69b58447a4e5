"""What the durable claim costs on a SQLite file, against syncs of a write-ahead log.

``bench cycle`` on a SQLite file runs the product's cycle (``durable_claims=True``: the claim's
transaction commits at ``synchronous = FULL``). ``ClaimCost`` times, right after each of those
cycles and so under the same load from the rest of the machine:

- one cycle on a store with ``durable_claims=False`` (every write at ``NORMAL``), on a sibling
  file in the same directory (``<file>-nondurable.db``), so neither store's log holds the
  other's frames;
- one ``fdatasync`` of a growing log-like file in the same directory (``<file>-fsync.probe``):
  one frame (a 24-byte header and a 4,096-byte page, a small commit's worth) appended, then
  synced;
- one ``fdatasync`` of the same file after appending as many frames as one cycle writes to
  SQLite's log (``log_frames_per_cycle``, counted once by SQLite itself: the log emptied, one
  cycle, ``PRAGMA wal_checkpoint`` reports its frames). That is what the claim's sync flushes:
  the cycle's other writes commit at ``NORMAL``, so the log is synced once per cycle, by the
  claim. The probe file is removed at the end;
- one cycle on a third store, ``durable_claims=False`` too (``<file>-synced.db``), that calls
  ``fdatasync`` on a file of its own right after each claim commits: what one plain sync costs
  a cycle at that point, wake-up after the wait included (``synced_median_ms``).

Fields added to the ``cycle`` line: ``nondurable_median_ms``, ``fsync_median_ms``,
``claim_cost_ratio`` = (``median_ms`` - ``nondurable_median_ms``) / ``fsync_median_ms`` (the
durable claim's price in one-frame syncs), ``log_frames_per_cycle``, ``fsync_log_median_ms``
``claim_cost_ratio_to_log_sync`` (its price in syncs of the log it makes durable), and
``synced_median_ms`` with ``claim_cost_ratio_in_cycle`` = (``median_ms`` -
``nondurable_median_ms``) / (``synced_median_ms`` - ``nondurable_median_ms``): the durable
claim's price in plain syncs made at the same point of the same cycle; and, from
``bench._claim_alone`` (a round after each), ``claim_alone_durable_ms``, ``claim_alone_ms``,
``log_sync_ms`` and ``claim_alone_ratio``: the claim's commit alone, priced in syncs of its own
log. The goal for each: at most ``CLAIM_COST_GOAL``.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from bench._claim_alone import ClaimAlone
from storage import ClaimRecord, StateChange, Storage, create_storage

CLAIM_COST_GOAL = 1.5
"""What a durable claim may cost, in syncs of a log (issue 35)."""
FRAME_BYTES = 24 + 4096
"""One write-ahead log frame: its header and one 4 KiB page."""

Cycle = Callable[[Storage, str], Awaitable[tuple[float, int]]]


def sqlite_file(url: str) -> Path | None:
    """The file a ``sqlite+aiosqlite:///`` URL names; None for anything else (or memory)."""
    if not url.startswith("sqlite+aiosqlite:"):
        return None
    from sqlalchemy.engine import make_url

    database = make_url(url).database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser()


class _SyncedAfterClaims:
    """A store whose claim commits are followed by one ``fdatasync`` of a file of its own (the
    claims a tool runs on, as durable claims are: not a run's answer's ``continued``)."""

    def __init__(self, inner: Storage, path: Path) -> None:
        self._inner = inner
        self._path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._frame = os.urandom(FRAME_BYTES)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def commit(self, change: StateChange) -> ClaimRecord | None:
        stored = await self._inner.commit(change)
        if change.claim is not None and change.claim.decision != "continued":
            os.write(self._fd, self._frame)
            os.fdatasync(self._fd)
        return stored

    async def close(self) -> None:
        os.close(self._fd)
        self._path.unlink(missing_ok=True)
        await self._inner.close()


class ClaimCost:
    """The non-durable cycle and the log syncs, timed beside each durable cycle."""

    def __init__(self, path: Path, cycle: Cycle) -> None:
        self._nondurable = path.with_name(f"{path.stem}-nondurable{path.suffix}")
        self._store = create_storage(
            f"sqlite+aiosqlite:///{self._nondurable}", durable_claims=False
        )
        synced = path.with_name(f"{path.stem}-synced{path.suffix}")
        self._synced = _SyncedAfterClaims(
            create_storage(f"sqlite+aiosqlite:///{synced}", durable_claims=False),
            path.with_name(f"{path.stem}-synced.probe"),
        )
        self._alone = ClaimAlone(path)
        self._warm_rounds = 0
        self._cycle = cycle
        self._probe_path = path.with_name(f"{path.stem}-fsync.probe")
        self._probe = os.open(self._probe_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._frame = os.urandom(FRAME_BYTES)
        self.nondurable_ms: list[float] = []
        self.fsync_ms: list[float] = []
        self.log_fsync_ms: list[float] = []
        self.synced_ms: list[float] = []
        self.log_frames = 0

    @property
    def _synced_store(self) -> Storage:
        return cast(Storage, self._synced)

    async def warm_up(self, n: str) -> None:
        await self._cycle(self._store, n)
        await self._cycle(self._synced_store, f"{n}-synced")
        await self._alone.once(f"w{n}")
        self._warm_rounds += 1
        self._sync()
        if not self.log_frames:
            self._frames_in_log(empty_first=True)
            await self._cycle(self._store, f"{n}-frames")
            self.log_frames = self._frames_in_log(empty_first=False)

    def _frames_in_log(self, *, empty_first: bool) -> int:
        """The frames in the non-durable store's log (the log emptied first: ``TRUNCATE``)."""
        mode = "TRUNCATE" if empty_first else "PASSIVE"
        with sqlite3.connect(self._nondurable) as probe:
            _busy, frames, _copied = probe.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
        return max(int(frames), 0)

    async def once(self, n: str) -> None:
        """One non-durable cycle, one with a plain sync after its claim, and the two log syncs."""
        self.nondurable_ms.append((await self._cycle(self._store, n))[0] * 1000)
        self.synced_ms.append((await self._cycle(self._synced_store, f"{n}-synced"))[0] * 1000)
        self.fsync_ms.append(self._sync() * 1000)
        self.log_fsync_ms.append(self._sync(max(self.log_frames, 1)) * 1000)
        await self._alone.once(n)

    def _sync(self, frames: int = 1) -> float:
        os.write(self._probe, self._frame * frames)
        started = time.perf_counter()
        os.fdatasync(self._probe)
        return time.perf_counter() - started

    async def close(self) -> None:
        os.close(self._probe)
        self._probe_path.unlink(missing_ok=True)
        await self._store.close()
        await self._synced.close()
        await self._alone.close()

    def figure(self, durable_median_ms: float) -> dict[str, Any]:
        """The fields above, from the medians of the timed rounds."""
        if not self.nondurable_ms:
            return {}
        nondurable = statistics.median(self.nondurable_ms)
        fsync = statistics.median(self.fsync_ms)
        log_fsync = statistics.median(self.log_fsync_ms)
        synced = statistics.median(self.synced_ms)
        cost = durable_median_ms - nondurable
        return {
            "nondurable_median_ms": round(nondurable, 3),
            "fsync_median_ms": round(fsync, 4),
            "claim_cost_ratio": _ratio(cost, fsync),
            "log_frames_per_cycle": self.log_frames,
            "fsync_log_median_ms": round(log_fsync, 4),
            "claim_cost_ratio_to_log_sync": _ratio(cost, log_fsync),
            "synced_median_ms": round(synced, 3),
            "claim_cost_ratio_in_cycle": _ratio(cost, synced - nondurable),
            **self._alone.figure(self._warm_rounds),
            "claim_cost_goal": CLAIM_COST_GOAL,
        }


def _ratio(cost_ms: float, sync_ms: float) -> float | None:
    return round(cost_ms / sync_ms, 2) if sync_ms > 0 else None
