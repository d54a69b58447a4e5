"""What the peer cycle scripts share: the command line, the timing loop, the JSON line.

Mirrors ``bench._cycle.run_cycles`` exactly: ``warmup`` untimed cycles, then ``cycles`` timed
ones, one at a time; median, p99 (the same index rule), cycles per second over the timed loop,
and the largest persisted state of a pending call. Runs in the peers' virtual environment
(standard library only here), so it cannot import ``bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

Cycle = Callable[[int], Awaitable[tuple[float, int]]]
"""One cycle number ``n`` → (seconds, persisted state bytes of the pending call)."""

SQLITE_PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL")
"""The pragmas countersign's SQLite backend sets (``storage/_sql_engine.py``)."""


def parse_args(framework: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=f"{framework}: the approval cycle, timed")
    parser.add_argument("--storage", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--path", default="bench-peer.db", help="SQLite file (--storage sqlite)")
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=5)
    return parser.parse_args()


async def time_cycles(one_cycle: Cycle, cycles: int, warmup: int) -> dict[str, Any]:
    for n in range(warmup):
        await one_cycle(-1 - n)
    timings: list[float] = []
    sizes: list[int] = []
    total_started = time.perf_counter()
    for n in range(cycles):
        elapsed, size = await one_cycle(n)
        timings.append(elapsed * 1000)
        sizes.append(size)
    total = time.perf_counter() - total_started
    timings.sort()
    return {
        "cycles": cycles,
        "median_ms": round(statistics.median(timings), 3),
        "p99_ms": round(timings[min(len(timings) - 1, int(len(timings) * 0.99))], 3),
        "cycles_per_s": round(cycles / total, 1),
        "state_bytes": max(sizes),
    }


def report(framework: str, version: str, storage: str, figure: dict[str, Any]) -> None:
    line = {"figure": "peer_cycle", "framework": framework, "version": version}
    print(json.dumps({**line, "storage": storage, **figure}), flush=True)


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(main())
