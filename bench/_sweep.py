"""The periodic sweep as pending calls pile up: the ``sweep`` figure (issue 35).

For each size (1,000 and 10,000 pending by default), on a fresh store: one real run suspends on
the gated ``delete-record`` and its snapshot is copied ``size`` times (new run ids), each not due
for an hour (``due_at``, as ``agents.next_due`` gives a call presented then); ``DUE`` of them are
made due now before each pass (their reminder moment passed, untimed). A pass is the bot's own
``bot.background.sweep`` on services assembled as ``python -m bot`` assembles them (no Slack call
is made: the due runs have no card). Reported: the median pass per size, the process's resident
memory after the passes (``/proc/self/statm``, garbage collected first), and each one's growth
``exponent``: log10 of the ratio per 10x of what is stored (0: flat; 1: grows with it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import math
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from agents import Agent, next_due
from agents.models import ScriptedModel, ScriptItem, call
from agents.stored._state import RunState
from bench._click_agent import AGENT
from bench._memory import resident_bytes
from bot import create_services, load_settings
from bot._assembly import serve_agent
from bot.background import sweep
from bot.slack.delivery._webclient import create_web_client
from storage import SnapshotRecord, Storage, create_storage, utcnow

DUE = 10
"""Runs due at each pass (the rest wait): what a pass must touch, whatever is stored."""
PASSES = 7
_BATCH = 50
"""Snapshots saved at once while filling (within a Redis client's connection pool)."""


def swept_agent(store: Storage, script: list[ScriptItem]) -> Agent:
    """``bench._click_agent``'s agent on ``store``: the runs filled here are its runs, so
    ``python -m bot`` serving ``BOT_AGENT=bench._click_agent:AGENT`` sweeps them too."""
    return Agent(
        id=AGENT.id,
        instructions="You delete records.",
        model=ScriptedModel(script),
        tools=dict(AGENT.tools),
        storage=store,
    )


async def _template(store: Storage) -> SnapshotRecord:
    agent = swept_agent(store, [call("delete_record", {"id": "rec-0"})])
    done = await agent.generate("Delete record rec-0", thread_id="bench-sweep", resource_id="bench")
    record = await store.load_snapshot(done.run_id)
    if done.finish_reason != "suspended" or record is None:
        raise RuntimeError(f"the template run ended {done.finish_reason!r}, expected 'suspended'")
    await store.delete_snapshot(done.run_id)
    return record


def _copy(template: SnapshotRecord, run_id: str, presented: Any) -> SnapshotRecord:
    state = RunState.model_validate(template.data)
    pending = [
        p.model_copy(
            update={"suspended_at": presented, "expires_at": presented + timedelta(hours=2)}
        )
        for p in state.pending
    ]
    state = state.model_copy(update={"run_id": run_id, "pending": pending})
    return dataclasses.replace(
        template,
        run_id=run_id,
        version=1,
        thread_id=None,  # started through the API: no Slack thread, no card
        data=state.to_document(),
        due_at=next_due(state.pending),
    )


async def _fill(store: Storage, template: SnapshotRecord, size: int) -> list[SnapshotRecord]:
    """``size`` pending runs presented 30 minutes ago: next due at their reminder, in an hour.
    Made and saved ``_BATCH`` at a time (the bench keeps only the ``DUE`` it makes due)."""
    presented = utcnow() - timedelta(minutes=30)
    tag = f"{time.time_ns():x}"  # a store given by URL may hold an earlier run's copies
    step = max(1, size // DUE)
    kept: list[SnapshotRecord] = []
    for start in range(0, size, _BATCH):
        batch = [
            _copy(template, f"sweep-{tag}-{size}-{n:07d}", presented)
            for n in range(start, min(size, start + _BATCH))
        ]
        await asyncio.gather(*(store.save_snapshot(r) for r in batch))
        kept += [r for r in batch if int(r.run_id.rsplit("-", 1)[1]) % step == 0]
    return kept[:DUE]


async def fill(url: str, size: int) -> list[str]:
    """Store ``size`` pending runs at ``url`` (none due for an hour); the ids of ``DUE`` of
    them, spread over the store, that ``make_due`` makes due."""
    store = create_storage(url)
    try:
        template = await _template(store)
        return [record.run_id for record in await _fill(store, template, size)]
    finally:
        await store.close()


async def make_due(store: Storage, run_ids: list[str], now: datetime) -> None:
    """The runs ``run_ids`` (filled at version 1) due just before ``now``."""
    for run_id in run_ids:
        await store.reschedule(run_id, version=1, due_at=now - timedelta(seconds=1))


async def time_passes(url: str, due: list[str]) -> tuple[float, int]:
    """(median pass in seconds, resident bytes after them) on a store ``fill`` filled."""
    store = create_storage(url)
    try:
        settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-bench", "SLACK_SIGNING_SECRET": "x"})
        client = create_web_client("xoxb-bench", api_url="http://127.0.0.1:9/")  # never called
        served = serve_agent(
            swept_agent(store, []), settings=settings, storage=store, client=client
        )
        services = create_services(
            agent=served.agent, policy=served.policy, client=client, settings=settings
        )
        times = []
        for _ in range(PASSES + 1):  # the first warms up (imports, caches, connections)
            now = utcnow()
            await make_due(store, due, now)  # due now again (the last pass moved them), untimed
            started = time.perf_counter()
            await sweep(services, now=now)
            times.append(time.perf_counter() - started)
        await services.runner.drain()
        times = times[1:]
        gc.collect()
        return statistics.median(times), resident_bytes()
    finally:
        await store.close()


async def _passes(url: str, size: int) -> tuple[float, int]:
    """(median pass in seconds, resident bytes after them) with ``size`` pending."""
    return await time_passes(url, await fill(url, size))


def exponent(small: float, large: float, ratio: float) -> float:
    """log10 of the growth per 10x of what is stored."""
    return round(math.log10(large / small) / math.log10(ratio), 3)


async def run_sweep(
    url: str | None = None, sizes: tuple[int, ...] = (1_000, 10_000)
) -> dict[str, Any]:
    """The ``sweep`` figure: one JSON line for the curve over ``sizes``."""
    with tempfile.TemporaryDirectory() as folder:
        times, rss = [], []
        for size in sizes:
            where = url or f"sqlite+aiosqlite:///{Path(folder) / f'sweep-{size}.db'}"
            median, resident = await _passes(where, size)
            times.append(median)
            rss.append(resident)
    ratio = sizes[-1] / sizes[0]
    return {
        "figure": "sweep",
        "storage": (url or "sqlite").split("://", 1)[0],
        "pending": list(sizes),
        "due_per_pass": DUE,
        "pass_median_ms": [round(t * 1000, 2) for t in times],
        "exponent": exponent(times[0], times[-1], ratio),
        "rss_mb": [round(r / 2**20, 1) for r in rss],
        "rss_exponent": exponent(rss[0], rss[-1], ratio),
    }
