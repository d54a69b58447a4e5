"""Listing stays a paged, counted query when thousands of runs are suspended."""

from __future__ import annotations

import asyncio

from storage import Storage
from tests.storage.records import snapshot

RUNS = 2_000


async def test_list_of_two_thousand_snapshots_pages_with_the_right_total(storage: Storage) -> None:
    semaphore = asyncio.Semaphore(16)

    async def save(n: int) -> None:
        async with semaphore:
            await storage.save_snapshot(
                snapshot(
                    f"run-{n:05d}",
                    second=n,
                    agent_id="ops" if n % 2 == 0 else "billing",
                    thread_id=f"T{n % 10}",
                    resource_id=f"U{n % 4}",
                )
            )

    await asyncio.gather(*(save(n) for n in range(RUNS)))

    page, total = await storage.list_snapshots(offset=100, limit=20)
    ops, ops_total = await storage.list_snapshots(agent_id="ops", offset=10, limit=5)
    both, both_total = await storage.list_snapshots(agent_id="ops", thread_id="T4", limit=3)
    last, _ = await storage.list_snapshots(agent_id="billing", offset=995, limit=10)

    assert total == RUNS
    assert [s.run_id for s in page] == [f"run-{n:05d}" for n in range(1899, 1879, -1)]
    assert ops_total == RUNS // 2
    assert [s.run_id for s in ops] == [f"run-{n:05d}" for n in range(1978, 1968, -2)]
    assert both_total == RUNS // 10
    assert [s.run_id for s in both] == ["run-01994", "run-01984", "run-01974"]
    assert [s.run_id for s in last] == [f"run-{n:05d}" for n in (9, 7, 5, 3, 1)]
