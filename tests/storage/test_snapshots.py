"""Contract: snapshots with optimistic versioning, filtered newest-first listing, paging."""

from __future__ import annotations

import asyncio

import pytest

from storage import SnapshotRecord, SnapshotVersionConflict, Storage
from tests.storage.records import T0, snapshot


async def test_saved_snapshot_loads_back_equal_with_utc_timestamps(storage: Storage) -> None:
    record = snapshot(
        "run-1", thread_id="T1", resource_id="U1", data={"z": 1, "a": [], "nested": {"k": None}}
    )
    await storage.save_snapshot(record)

    loaded = await storage.load_snapshot("run-1")

    assert loaded == record
    assert loaded is not None and loaded.suspended_at.utcoffset() is not None
    assert list(loaded.data) == ["z", "a", "nested"]


async def test_missing_snapshot_loads_as_none(storage: Storage) -> None:
    assert await storage.load_snapshot("nope") is None


async def test_replacing_needs_the_next_version(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.save_snapshot(snapshot("run-1", version=2, second=5, agent_id="other"))

    loaded = await storage.load_snapshot("run-1")

    assert loaded == snapshot("run-1", version=2, second=5, agent_id="other")


@pytest.mark.parametrize("version", [1, 3, 0])
async def test_wrong_version_conflicts_and_keeps_the_stored_one(
    storage: Storage, version: int
) -> None:
    await storage.save_snapshot(snapshot("run-1"))

    with pytest.raises(SnapshotVersionConflict) as caught:
        await storage.save_snapshot(snapshot("run-1", version=version, data={"lost": True}))

    assert caught.value.run_id == "run-1"
    assert await storage.load_snapshot("run-1") == snapshot("run-1")


async def test_replacing_a_missing_snapshot_conflicts(storage: Storage) -> None:
    with pytest.raises(SnapshotVersionConflict):
        await storage.save_snapshot(snapshot("run-1", version=2))
    assert await storage.load_snapshot("run-1") is None


async def test_concurrent_writers_of_one_version_have_exactly_one_winner(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))

    async def write(n: int) -> bool:
        try:
            await storage.save_snapshot(snapshot("run-1", version=2, data={"writer": n}))
        except SnapshotVersionConflict:
            return False
        return True

    results = await asyncio.gather(*(write(n) for n in range(20)))

    assert results.count(True) == 1
    loaded = await storage.load_snapshot("run-1")
    assert loaded is not None and loaded.data == {"writer": results.index(True)}


async def test_deleted_snapshot_is_gone_and_delete_is_idempotent(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1", thread_id="T1"))

    await storage.delete_snapshot("run-1")
    await storage.delete_snapshot("run-1")

    assert await storage.load_snapshot("run-1") is None
    assert await storage.list_snapshots() == ([], 0)
    assert await storage.list_snapshots(thread_id="T1") == ([], 0)
    await storage.save_snapshot(snapshot("run-1"))  # the run id is free again: version 1
    assert await storage.load_snapshot("run-1") == snapshot("run-1")


async def test_list_is_newest_first_with_total(storage: Storage) -> None:
    for n, second in enumerate([30, 10, 20]):
        await storage.save_snapshot(snapshot(f"run-{n}", second=second))

    found, total = await storage.list_snapshots()

    assert [s.run_id for s in found] == ["run-0", "run-2", "run-1"]
    assert total == 3


async def test_list_filters_combine_and_total_counts_matches_only(storage: Storage) -> None:
    rows = [
        ("r1", "ops", "T1", "U1"),
        ("r2", "ops", "T1", "U2"),
        ("r3", "ops", "T2", "U1"),
        ("r4", "billing", "T1", "U1"),
        ("r5", "ops", None, None),
    ]
    for n, (run_id, agent, thread, resource) in enumerate(rows):
        await storage.save_snapshot(
            snapshot(run_id, second=n, agent_id=agent, thread_id=thread, resource_id=resource)
        )

    def ids(result: tuple[list[SnapshotRecord], int]) -> tuple[list[str], int]:
        return [s.run_id for s in result[0]], result[1]

    assert ids(await storage.list_snapshots(agent_id="ops")) == (["r5", "r3", "r2", "r1"], 4)
    assert ids(await storage.list_snapshots(thread_id="T1")) == (["r4", "r2", "r1"], 3)
    assert ids(await storage.list_snapshots(resource_id="U1")) == (["r4", "r3", "r1"], 3)
    assert ids(await storage.list_snapshots(agent_id="ops", thread_id="T1")) == (["r2", "r1"], 2)
    assert ids(await storage.list_snapshots(agent_id="ops", thread_id="T1", resource_id="U1")) == (
        ["r1"],
        1,
    )
    assert ids(await storage.list_snapshots(agent_id="nobody")) == ([], 0)


async def test_replacing_moves_a_snapshot_between_indexes(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("r1", thread_id="T1", resource_id="U1"))
    await storage.save_snapshot(
        snapshot("r1", version=2, second=9, agent_id="billing", thread_id="T2", resource_id=None)
    )

    assert await storage.list_snapshots(thread_id="T1") == ([], 0)
    assert await storage.list_snapshots(resource_id="U1") == ([], 0)
    assert await storage.list_snapshots(agent_id="ops") == ([], 0)
    found, total = await storage.list_snapshots(agent_id="billing", thread_id="T2")
    assert total == 1 and found[0].version == 2


async def test_paging_returns_slices_and_the_full_total(storage: Storage) -> None:
    for n in range(7):
        await storage.save_snapshot(snapshot(f"run-{n}", second=n, thread_id="T1"))

    first, total = await storage.list_snapshots(thread_id="T1", limit=3)
    second, _ = await storage.list_snapshots(thread_id="T1", offset=3, limit=3)
    last, _ = await storage.list_snapshots(thread_id="T1", offset=6, limit=3)
    beyond, beyond_total = await storage.list_snapshots(thread_id="T1", offset=50, limit=3)
    empty_page, _ = await storage.list_snapshots(thread_id="T1", limit=0)

    assert total == 7 and beyond_total == 7
    assert [s.run_id for s in first + second + last] == [f"run-{n}" for n in range(6, -1, -1)]
    assert beyond == [] and empty_page == []


async def test_equal_timestamps_order_by_run_id_descending(storage: Storage) -> None:
    for run_id in ["b", "c", "a"]:
        await storage.save_snapshot(snapshot(run_id))

    found, _ = await storage.list_snapshots()

    assert [s.run_id for s in found] == ["c", "b", "a"]
    assert found[0].suspended_at == T0
