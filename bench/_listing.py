"""``list_suspended_runs`` over a large store: one page and the total from indexed queries."""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import timedelta
from typing import Any

from agents import Agent
from agents.models import ScriptedModel
from agents.stored._state import PendingCallState, RunState
from storage import SnapshotRecord, Storage, create_storage, utcnow


def _snapshot(n: int, agent_id: str) -> SnapshotRecord:
    now = utcnow() - timedelta(seconds=n)
    state = RunState(
        run_id=f"bench-list-{n:07d}",
        agent_id=agent_id,
        thread_id=f"thread-{n % 1000}",
        resource_id=f"channel-{n % 50}",
        pending=[
            PendingCallState(
                tool_call_id="c1",
                call_id="c1",
                local_tool="delete-record",
                local_args={"id": str(n)},
                requires_approval=True,
                tool_name="delete-record",
                args={"id": str(n)},
                fingerprint="0" * 64,
                agent_path=[agent_id],
                suspended_at=now,
            )
        ],
    )
    return SnapshotRecord(
        run_id=state.run_id,
        agent_id=agent_id,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        suspended_at=now,
        version=1,
        data=state.to_document(),
    )


async def _fill(store: Storage, runs: int, agent_id: str) -> None:
    _, total = await store.list_snapshots(agent_id=agent_id, limit=1)
    batch = 200
    for start in range(total, runs, batch):
        await asyncio.gather(
            *(
                store.save_snapshot(_snapshot(n, agent_id))
                for n in range(start, min(runs, start + batch))
            )
        )


async def run_listing(url: str, runs: int, queries: int = 50) -> dict[str, Any]:
    """Fill ``url`` with ``runs`` suspended runs (kept for the next time), then time listings."""
    store = create_storage(url)
    agent_id = f"bench-list-{runs}"
    try:
        fill_started = time.perf_counter()
        await _fill(store, runs, agent_id)
        fill_s = time.perf_counter() - fill_started
        agent = Agent(id=agent_id, model=ScriptedModel([]), storage=store)
        pages: list[float] = []
        threads: list[float] = []
        for q in range(queries):
            started = time.perf_counter()
            page = await agent.list_suspended_runs(page=q % 10, per_page=20)
            pages.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await agent.list_suspended_runs(thread_id=f"thread-{q}", page=0, per_page=20)
            threads.append((time.perf_counter() - started) * 1000)
        if page.total != runs:
            raise RuntimeError(f"listing counted {page.total} runs, expected {runs}")
    finally:
        await store.close()
    return {
        "figure": "list_suspended_runs",
        "storage": url.split("://", 1)[0],
        "stored_runs": runs,
        "fill_s": round(fill_s, 1),
        "page_median_ms": round(statistics.median(pages), 3),
        "by_thread_median_ms": round(statistics.median(threads), 3),
    }
