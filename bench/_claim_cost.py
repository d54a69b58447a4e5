"""What the durable claim costs on a SQLite file, against one sync of a write-ahead log.

``bench cycle`` on a SQLite file runs the product's cycle (``durable_claims=True``: the claim's
transaction commits at ``synchronous = FULL``). ``ClaimCost`` times, right after each of those
cycles and so under the same load from the rest of the machine:

- one cycle on a store with ``durable_claims=False`` (every write at ``NORMAL``), on a sibling
  file in the same directory (``<file>-nondurable.db``), so neither store's log holds the
  other's frames;
- one ``fdatasync`` of a growing log-like file in the same directory (``<file>-fsync.probe``):
  one frame (a 24-byte header and a 4,096-byte page, a small commit's worth) appended, then
  synced; the file is removed at the end.

Fields added to the ``cycle`` line: ``nondurable_median_ms``, ``fsync_median_ms`` and
``claim_cost_ratio`` = (``median_ms`` - ``nondurable_median_ms``) / ``fsync_median_ms``: the
durable claim's price in syncs of a log (goal: at most ``CLAIM_COST_GOAL``).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from storage import Storage, create_storage

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


class ClaimCost:
    """The non-durable cycle and the log sync, timed beside each durable cycle."""

    def __init__(self, path: Path, cycle: Cycle) -> None:
        nondurable = path.with_name(f"{path.stem}-nondurable{path.suffix}")
        self._store = create_storage(f"sqlite+aiosqlite:///{nondurable}", durable_claims=False)
        self._cycle = cycle
        self._probe_path = path.with_name(f"{path.stem}-fsync.probe")
        self._probe = os.open(self._probe_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self._frame = os.urandom(FRAME_BYTES)
        self.nondurable_ms: list[float] = []
        self.fsync_ms: list[float] = []

    async def warm_up(self, n: str) -> None:
        await self._cycle(self._store, n)
        self._sync()

    async def once(self, n: str) -> None:
        """One non-durable cycle and one log sync, timed."""
        self.nondurable_ms.append((await self._cycle(self._store, n))[0] * 1000)
        self.fsync_ms.append(self._sync() * 1000)

    def _sync(self) -> float:
        os.write(self._probe, self._frame)
        started = time.perf_counter()
        os.fdatasync(self._probe)
        return time.perf_counter() - started

    async def close(self) -> None:
        os.close(self._probe)
        self._probe_path.unlink(missing_ok=True)
        await self._store.close()

    def figure(self, durable_median_ms: float) -> dict[str, Any]:
        """``nondurable_median_ms``, ``fsync_median_ms``, ``claim_cost_ratio``."""
        if not self.nondurable_ms:
            return {}
        nondurable = statistics.median(self.nondurable_ms)
        fsync = statistics.median(self.fsync_ms)
        ratio = (durable_median_ms - nondurable) / fsync if fsync > 0 else None
        return {
            "nondurable_median_ms": round(nondurable, 3),
            "fsync_median_ms": round(fsync, 4),
            "claim_cost_ratio": None if ratio is None else round(ratio, 2),
            "claim_cost_goal": CLAIM_COST_GOAL,
        }
