"""Pending calls piled up in one SQLite file: the ``sweep``, ``rss_pending`` and ``startup_cpu``
curves of ``python -m bench scale``, one store per size.

1. ``bench._sweep.fill`` stores ``size`` pending runs of ``bench._click_agent``'s agent (none
   due for an hour); ``DUE`` of them are made due before each pass.
2. The sweep: ``bench._sweep.time_passes``, the bot's own pass in this process (median ms).
3. ``python -m bot`` serving that file (``BOT_AGENT=bench._click_agent:AGENT``, ``FakeSlack``
   as the Web API, no OpenAI key, no MCP server) starts a first time and runs until it is idle:
   the first start on a store looks once at every stored run (a page at a time) for claims old
   versions completed without their snapshot; its CPU and memory are reported apart.
4. Then it is started ``STARTS`` times: the CPU seconds (user + system) it used until
   ``/healthz`` first answered, the median of them. The last one is left running through a
   sweep with the due runs due (its periodic work, as deployed), then its resident memory is
   read.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass
from pathlib import Path

from bench._clicks import cpu_seconds, rss_bytes, serve_bot
from bench._fake_slack import FakeSlack
from bench._sweep import fill, make_due, time_passes
from storage import create_storage, utcnow

STARTS = 3
"""Starts of ``python -m bot`` per size (the median CPU is reported)."""
SETTLE_S = 900.0
"""How long the first start may take to go idle (its one-time look at every stored run)."""
IDLE_CPU_S = 0.3
"""CPU seconds in ``IDLE_WINDOW_S`` below which a bot is idle (its sweeps and timers only)."""
IDLE_WINDOW_S = 3.0
HOLD_S = 6.0
"""How long the last start runs before its memory is read: past its first sweep (at start)
and one more (the sweep runs at least every 5 s)."""


@dataclass(frozen=True, kw_only=True)
class PendingPoint:
    """One size's figures."""

    sweep_ms: float
    """Median sweep pass, in this process."""
    sweep_rss_mb: float
    """This process's resident memory after the passes (the fill's memory included)."""
    bot_rss_mb: float
    """The bot's resident memory after its sweeps."""
    startup_cpu_s: float
    """Median CPU seconds of ``python -m bot`` until ``/healthz`` answered."""
    startup_cpu_all_s: list[float]
    """Each start's."""
    first_start_cpu_s: float
    """The first start on the store: CPU until ``/healthz`` answered."""
    first_start_idle_s: float
    """... and CPU seconds until it went idle (its one-time look at every stored run, a page
    at a time, for claims completed by old versions without their snapshot)."""
    first_start_rss_mb: float
    """... and its resident memory then."""


async def _until_idle(pid: int) -> float:
    """Wait until process ``pid`` uses under ``IDLE_CPU_S`` in ``IDLE_WINDOW_S``; its CPU."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    used = cpu_seconds(pid)
    while loop.time() < deadline:
        await asyncio.sleep(IDLE_WINDOW_S)
        now = cpu_seconds(pid)
        if now - used < IDLE_CPU_S:
            return now
        used = now
    raise RuntimeError(f"python -m bot was still busy {SETTLE_S:.0f} s after it started")


async def measure(folder: Path, size: int) -> PendingPoint:
    """Fill a SQLite file in ``folder`` with ``size`` pending runs and measure it."""
    url = f"sqlite+aiosqlite:///{folder / f'pending-{size}.db'}"
    due = await fill(url, size)
    sweep_s, sweep_rss = await time_passes(url, due)
    store = create_storage(url)
    try:
        await make_due(store, due, utcnow())
    finally:
        await store.close()
    cpu: list[float] = []
    rss = 0
    async with FakeSlack() as slack:
        async with serve_bot(slack, url) as served:  # the store's first start: one-time work
            first_cpu = served.ready_cpu_s
            first_idle = await _until_idle(served.pid)
            first_rss = rss_bytes(served.pid)
        for start in range(STARTS):
            async with serve_bot(slack, url) as served:
                cpu.append(served.ready_cpu_s)
                if start == STARTS - 1:
                    await asyncio.sleep(HOLD_S)
                    rss = rss_bytes(served.pid)
    return PendingPoint(
        sweep_ms=round(sweep_s * 1000, 2),
        sweep_rss_mb=round(sweep_rss / 2**20, 1),
        bot_rss_mb=round(rss / 2**20, 1),
        startup_cpu_s=round(statistics.median(cpu), 3),
        startup_cpu_all_s=[round(c, 3) for c in cpu],
        first_start_cpu_s=round(first_cpu, 3),
        first_start_idle_s=round(first_idle, 3),
        first_start_rss_mb=round(first_rss / 2**20, 1),
    )
