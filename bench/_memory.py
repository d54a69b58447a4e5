"""Process memory while pending runs pile up: the ``memory`` figure.

Suspends ``small`` then ``large`` runs (each waiting for approval, as in ``bench._cycle``) on one
store and reads the process's resident memory after each batch (``/proc/self/statm``; the
garbage collector runs first). Pending runs live in storage, not in the process: the figure's
``growth`` (``rss_large / rss_small - 1``) should stay near zero.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from agents.models import call
from bench._cycle import _agent
from storage import Storage, create_storage


def resident_bytes() -> int:
    """This process's resident set size, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


async def _suspend(store: Storage, prefix: str, count: int, start: int) -> None:
    for n in range(start, start + count):
        agent = _agent(store, [call("delete-record", {"id": f"rec-{n}"})])
        result = await agent.generate(
            f"Delete record rec-{n}", thread_id=f"{prefix}-{n}", resource_id="bench"
        )
        if result.finish_reason != "suspended":
            raise RuntimeError(f"run {n} ended {result.finish_reason!r}, expected 'suspended'")


async def run_memory(url: str, small: int = 1_000, large: int = 10_000) -> dict[str, Any]:
    """RSS after ``small`` and after ``large`` pending runs on the storage at ``url``."""
    prefix = f"mem-{time.time_ns():x}"
    store = create_storage(url)
    try:
        await _suspend(store, prefix, small, 0)
        gc.collect()
        rss_small = resident_bytes()
        await _suspend(store, prefix, large - small, small)
        gc.collect()
        rss_large = resident_bytes()
    finally:
        await store.close()
    return {
        "figure": "memory",
        "storage": url.split("://", 1)[0],
        "pending_small": small,
        "pending_large": large,
        "rss_small_mb": round(rss_small / 2**20, 1),
        "rss_large_mb": round(rss_large / 2**20, 1),
        "growth": round(rss_large / rss_small - 1, 3),
    }
