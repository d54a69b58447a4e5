"""The suspend → persist → new Agent → approve → finish cycle, timed with a scripted model."""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import Storage, create_storage
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


async def one_cycle(store: Storage, n: int) -> tuple[float, int]:
    """One full cycle; returns (seconds, snapshot bytes)."""
    started = time.perf_counter()
    first = await _agent(store, [call("delete-record", {"id": f"rec-{n}"})]).generate(
        f"Delete record rec-{n}", thread_id=f"bench-{n}", resource_id="bench"
    )
    record = await store.load_snapshot(first.run_id)
    size = len(json.dumps(record.data, separators=(",", ":"))) if record else 0
    restarted = _agent(store, [reply("Deleted.")])
    done = await restarted.approve_tool_call_generate(run_id=first.run_id, decided_by="bench")
    elapsed = time.perf_counter() - started
    if done.finish_reason != "stop":
        raise RuntimeError(f"cycle {n} ended {done.finish_reason!r}, expected 'stop'")
    return elapsed, size


async def run_cycles(url: str, cycles: int, warmup: int = 5) -> dict[str, Any]:
    """Time ``cycles`` cycles on the storage at ``url`` (after ``warmup`` untimed ones)."""
    store = create_storage(url)
    try:
        for n in range(warmup):
            await one_cycle(store, -1 - n)
        timings: list[float] = []
        sizes: list[int] = []
        total_started = time.perf_counter()
        for n in range(cycles):
            elapsed, size = await one_cycle(store, n)
            timings.append(elapsed * 1000)
            sizes.append(size)
        total = time.perf_counter() - total_started
    finally:
        await store.close()
    timings.sort()
    return {
        "figure": "cycle",
        "storage": url.split("://", 1)[0],
        "cycles": cycles,
        "median_ms": round(statistics.median(timings), 3),
        "p99_ms": round(timings[min(len(timings) - 1, int(len(timings) * 0.99))], 3),
        "cycles_per_s": round(cycles / total, 1),
        "snapshot_bytes": max(sizes),
    }
