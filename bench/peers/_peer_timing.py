"""What the cycle benchmarks share: the command line, the timing loop, the raw-store floor.

Runs in the peers' virtual environment as well as in ours (``bench._cycle`` imports it), so it
uses the standard library only and cannot import ``bench``, ``agents`` or ``storage``.

The timing loop: ``warmup`` untimed cycles, then ``cycles`` timed ones, one at a time; median,
p99 (index ``int(n * 0.99)`` of the sorted timings), cycles per second over the timed loop, and
the largest persisted state of a pending call.

The floor: right after each timed cycle, the same process does what a minimal durable approval
needs done directly on the same storage class, with no framework (``floor_once``): write a small
JSON row, read it back and parse it, delete it. A dict for in-memory storage; for a SQLite file,
the standard ``sqlite3`` module (the driver ``aiosqlite`` wraps) on a sibling file
(``floor_path``) with countersign's pragmas, each statement its own transaction. Interleaving
floor and cycle puts both under the same load from the rest of the machine, so
``ratio_to_floor`` (cycle median over floor median) compares frameworks measured in different
processes, or at different times, more fairly than their medians do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

Cycle = Callable[[int], Awaitable[tuple[float, int]]]
"""One cycle number ``n`` → (seconds, persisted state bytes of the pending call)."""

SQLITE_PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL")
"""The pragmas countersign's SQLite backend sets (``storage/sql/_engine.py``)."""


class RawStore(Protocol):
    """A key → JSON text store with no framework on top: what the floor times."""

    async def write(self, key: str, value: str) -> None: ...
    async def read(self, key: str) -> str: ...
    async def delete(self, key: str) -> None: ...
    async def close(self) -> None: ...


class MemoryRawStore:
    """A dict: the floor of in-memory storage."""

    def __init__(self) -> None:
        self._rows: dict[str, str] = {}

    async def write(self, key: str, value: str) -> None:
        self._rows[key] = value

    async def read(self, key: str) -> str:
        return self._rows[key]

    async def delete(self, key: str) -> None:
        del self._rows[key]

    async def close(self) -> None:
        self._rows.clear()


class SqliteRawStore:
    """One table in a SQLite file (WAL, synchronous NORMAL), autocommit: one transaction each."""

    def __init__(self, path: str) -> None:
        self._conn = sqlite3.connect(path, isolation_level=None)
        for pragma in SQLITE_PRAGMAS:
            self._conn.execute(pragma)
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS floor_rows (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        self._conn.execute("DELETE FROM floor_rows")  # what an interrupted run left

    async def write(self, key: str, value: str) -> None:
        self._conn.execute("INSERT INTO floor_rows VALUES (?, ?)", (key, value))

    async def read(self, key: str) -> str:
        row = self._conn.execute("SELECT value FROM floor_rows WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return str(row[0])

    async def delete(self, key: str) -> None:
        self._conn.execute("DELETE FROM floor_rows WHERE key = ?", (key,))

    async def close(self) -> None:
        self._conn.close()


def floor_path(path: str | Path) -> str:
    """The floor's SQLite file next to a benchmark's file: ``x.db`` → ``x-floor.db``."""
    path = Path(path)
    return str(path.with_name(f"{path.stem}-floor{path.suffix}"))


def open_raw_store(storage: str, path: str | Path) -> RawStore:
    """The floor store of a storage class: ``memory``, or ``sqlite`` beside ``path``."""
    if storage == "memory":
        return MemoryRawStore()
    if storage == "sqlite":
        return SqliteRawStore(floor_path(path))
    raise ValueError(f"no stdlib floor for storage {storage!r}: use memory or sqlite")


async def floor_once(store: RawStore, n: int) -> float:
    """Seconds to write, read back (and parse) and delete one pending-approval row."""
    key = f"floor-{n}"
    row = {"run_id": key, "tool": "delete-record", "args": {"id": f"rec-{n}"}, "status": "pending"}
    started = time.perf_counter()
    await store.write(key, json.dumps(row, separators=(",", ":")))
    if json.loads(await store.read(key))["run_id"] != key:
        raise RuntimeError(f"floor row {key} read back wrong")
    await store.delete(key)
    return time.perf_counter() - started


def percentile_99(sorted_ms: list[float]) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(len(sorted_ms) * 0.99))]


def with_floor(figure: dict[str, Any], floor_ms: list[float]) -> dict[str, Any]:
    """``figure`` plus ``floor_median_ms`` and ``ratio_to_floor`` (its median over the floor's)."""
    floor = statistics.median(floor_ms)
    ratio = round(figure["median_ms"] / floor, 1) if floor > 0 else None
    return {**figure, "floor_median_ms": round(floor, 4), "ratio_to_floor": ratio}


def parse_args(framework: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=f"{framework}: the approval cycle, timed")
    parser.add_argument("--storage", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--path", default="bench-peer.db", help="SQLite file (--storage sqlite)")
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=5)
    return parser.parse_args()


async def time_cycles(
    one_cycle: Cycle, cycles: int, warmup: int, floor: RawStore
) -> dict[str, Any]:
    """Time the cycles, each followed by one untimed-by-it ``floor_once`` on ``floor``."""
    for n in range(warmup):
        await one_cycle(-1 - n)
        await floor_once(floor, -1 - n)
    timings: list[float] = []
    floor_ms: list[float] = []
    sizes: list[int] = []
    cycles_s = 0.0
    for n in range(cycles):
        elapsed, size = await one_cycle(n)
        cycles_s += elapsed
        timings.append(elapsed * 1000)
        sizes.append(size)
        floor_ms.append(await floor_once(floor, n) * 1000)
    timings.sort()
    figure = {
        "cycles": cycles,
        "median_ms": round(statistics.median(timings), 3),
        "p99_ms": round(percentile_99(timings), 3),
        "cycles_per_s": round(cycles / cycles_s, 1),
        "state_bytes": max(sizes),
    }
    return with_floor(figure, floor_ms)


def report(framework: str, version: str, storage: str, figure: dict[str, Any]) -> None:
    line = {"figure": "peer_cycle", "framework": framework, "version": version}
    print(json.dumps({**line, "storage": storage, **figure}), flush=True)


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())
