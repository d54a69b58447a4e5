"""The suspend → persist → new Agent → approve → finish cycle, timed with a scripted model.

``run_cycles`` gives the ``cycle`` figure of one storage URL:

- ``median_ms``, ``p99_ms``, ``cycles_per_s``: ``cycles`` timed cycles one at a time, after
  ``warmup`` untimed ones; each on its own thread, each checked to end with ``"stop"``.
- ``floor_median_ms``, ``ratio_to_floor``: the raw-store floor (``bench._floor``), one round
  right after each timed cycle in this process; the ratio is our median over the floor's.
- ``snapshot_bytes``: the stored snapshot of the pending call (read untimed, between the halves).
- ``statements_per_cycle``, ``transactions_per_cycle``, ``commits_per_cycle`` (SQL backends;
  PostgreSQL adds ``round_trips_per_cycle``) or ``redis_commands_per_cycle``,
  ``redis_round_trips_per_cycle`` (Redis): the median over the timed cycles
  (``bench._counting``); the snapshot read is not counted.
- ``in_flight``, ``concurrent_cycles_per_s``, ``concurrent_failures``: ``in_flight`` cycles
  started at once (``asyncio.gather``), each its own run and thread, after one untimed batch
  of as many (the warm-up of the connections they need); a cycle that raises or does not end
  with ``"stop"`` is a failure, and the first failure's message is in ``error``.
- ``nondurable_median_ms``, ``fsync_median_ms``, ``claim_cost_ratio``, ``claim_cost_goal``
  (a SQLite file, durable claims): the same cycle without durable claims and one sync of a
  log, timed right after each timed cycle (``bench._claim_cost``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from bench._claim_cost import ClaimCost, sqlite_file
from bench._counting import Counts, open_counted
from bench._floor import open_floor
from bench.peers._peer_timing import floor_once, percentile_99, with_floor
from storage import Storage
from tools import ToolContext, create_tool


class DeleteInput(BaseModel):
    id: str


async def _delete(input: DeleteInput, ctx: ToolContext) -> dict[str, Any]:
    return {"deleted": input.id}


DELETE = create_tool(
    id="delete-record",
    description="Delete a record by ID",
    input_schema=DeleteInput,
    execute=_delete,
    require_approval=True,
)


def _agent(store: Storage, script: list[Any]) -> Agent:
    return Agent(
        id="ops",
        instructions="You run operations.",
        model=ScriptedModel(script),
        tools=[DELETE],
        storage=store,
    )


async def one_cycle(store: Storage, n: int | str, *, probe: bool = False) -> tuple[float, int]:
    """One full cycle; (seconds, snapshot bytes when ``probe``: read untimed, else 0)."""
    started = time.perf_counter()
    first = await _agent(store, [call("delete-record", {"id": f"rec-{n}"})]).generate(
        f"Delete record rec-{n}", thread_id=f"bench-{n}", resource_id="bench"
    )
    paused = time.perf_counter()
    size = 0
    if probe:
        record = await store.load_snapshot(first.run_id)
        size = len(json.dumps(record.data, separators=(",", ":"))) if record else 0
    resumed = time.perf_counter()
    restarted = _agent(store, [reply("Deleted.")])
    done = await restarted.approve_tool_call_generate(run_id=first.run_id, decided_by="bench")
    elapsed = (paused - started) + (time.perf_counter() - resumed)
    if done.finish_reason != "stop":
        raise RuntimeError(f"cycle {n} ended {done.finish_reason!r}, expected 'stop'")
    return elapsed, size


async def run_cycles(
    url: str,
    cycles: int,
    warmup: int = 5,
    in_flight: int = 100,
    *,
    durable_claims: bool = True,
) -> dict[str, Any]:
    """The ``cycle`` figure of the storage at ``url`` (``in_flight=0``: no concurrent part).

    ``durable_claims``: as the product runs (SQLite syncs the claim before the tool runs);
    False only where every framework is compared at ``synchronous = NORMAL`` (``bench peers``).
    """
    prefix = f"{time.time_ns():x}"  # a rerun on a kept database starts fresh threads
    store, counts = open_counted(url, durable_claims=durable_claims)
    floor = await open_floor(url)
    path = sqlite_file(url) if durable_claims else None
    cost = ClaimCost(path, one_cycle) if path is not None else None
    try:
        for n in range(warmup):
            await one_cycle(store, f"{prefix}-w{n}")
            await floor_once(floor, -1 - n)
            if cost is not None:
                await cost.warm_up(f"{prefix}-nw{n}")
        timings: list[float] = []
        floor_ms: list[float] = []
        per_cycle: list[dict[str, int]] = []
        sizes: list[int] = []
        for n in range(cycles):
            before = counts.snapshot() if counts else {}
            elapsed, _ = await one_cycle(store, f"{prefix}-{n}")
            if counts:
                per_cycle.append({k: v - before[k] for k, v in counts.snapshot().items()})
            timings.append(elapsed * 1000)
            floor_ms.append(await floor_once(floor, n) * 1000)
            if cost is not None:
                await cost.once(f"{prefix}-n{n}")
        sizes.append((await one_cycle(store, f"{prefix}-probe", probe=True))[1])
        concurrent = await run_concurrent(store, in_flight, prefix) if in_flight else {}
    finally:
        await floor.close()
        await store.close()
        if cost is not None:
            await cost.close()
    timings.sort()
    figure = {
        "figure": "cycle",
        "storage": url.split("://", 1)[0],
        "cycles": cycles,
        "median_ms": round(statistics.median(timings), 3),
        "p99_ms": round(percentile_99(timings), 3),
        "cycles_per_s": round(cycles / (sum(timings) / 1000), 1),
        "snapshot_bytes": max(sizes),
        "durable_claims": durable_claims,
    }
    claim = cost.figure(statistics.median(timings)) if cost is not None else {}
    return {
        **with_floor(figure, floor_ms),
        **_per_cycle(counts, per_cycle),
        **claim,
        **concurrent,
    }


def _per_cycle(counts: Counts | None, per_cycle: list[dict[str, int]]) -> dict[str, int]:
    if counts is None or not per_cycle:
        return {}
    return {f"{k}_per_cycle": statistics.median_low(c[k] for c in per_cycle) for k in counts.names}


async def run_concurrent(store: Storage, in_flight: int, prefix: str) -> dict[str, Any]:
    """``in_flight`` cycles at once: cycles/s over the whole batch, failures counted.

    One untimed batch first, as the one-at-a-time cycles have their warm-up: it opens the
    connections that many cycles at once need (a running bot has them open), so the timed
    batch measures cycles, not connection set-up.
    """
    await asyncio.gather(
        *(one_cycle(store, f"{prefix}-cw{n}") for n in range(in_flight)), return_exceptions=True
    )
    started = time.perf_counter()
    outcomes = await asyncio.gather(
        *(one_cycle(store, f"{prefix}-c{n}") for n in range(in_flight)), return_exceptions=True
    )
    total = time.perf_counter() - started
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    figure: dict[str, Any] = {
        "in_flight": in_flight,
        "concurrent_cycles_per_s": round((in_flight - len(failures)) / total, 1),
        "concurrent_failures": len(failures),
    }
    if failures:
        first = failures[0]
        figure["error"] = f"{len(failures)}/{in_flight} concurrent cycles failed; first: " + (
            f"{type(first).__name__}: {first}"
        )
    return figure
