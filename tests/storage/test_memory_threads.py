"""Contract: memory threads and their messages."""

from __future__ import annotations

from storage import Storage, ThreadRecord
from tests.storage.records import at, message


async def test_thread_is_created_then_updated(storage: Storage) -> None:
    thread = ThreadRecord(
        thread_id="T1", resource_id="U1", created_at=at(0), updated_at=at(0), metadata={"a": 1}
    )
    await storage.save_thread(thread)
    updated = ThreadRecord(
        thread_id="T1", resource_id="U1", created_at=at(0), updated_at=at(9), metadata={"b": [2]}
    )
    await storage.save_thread(updated)

    assert await storage.get_thread("T1") == updated
    assert await storage.get_thread("T2") is None


async def test_messages_come_back_in_append_order(storage: Storage) -> None:
    await storage.append_messages([message("T1", n) for n in range(3)])
    await storage.append_messages([message("T2", 0)])
    await storage.append_messages([message("T1", n) for n in range(3, 5)])
    await storage.append_messages([])

    found = await storage.list_messages("T1")

    assert found == [message("T1", n) for n in range(5)]
    assert await storage.list_messages("T2") == [message("T2", 0)]
    assert await storage.list_messages("none") == []


async def test_limit_keeps_the_newest_messages_oldest_first(storage: Storage) -> None:
    await storage.append_messages([message("T1", n) for n in range(6)])

    assert await storage.list_messages("T1", limit=2) == [message("T1", 4), message("T1", 5)]
    assert await storage.list_messages("T1", limit=0) == []
    assert len(await storage.list_messages("T1", limit=100)) == 6


async def test_exclude_run_id_drops_that_runs_messages_before_limiting(storage: Storage) -> None:
    kept = [message("T1", n, run_id="old") for n in range(3)] + [message("T1", 3, run_id=None)]
    current = [message("T1", n, run_id="current") for n in range(4, 600)]
    await storage.append_messages(kept + current)

    assert await storage.list_messages("T1", exclude_run_id="current") == kept
    assert await storage.list_messages("T1", exclude_run_id="current", limit=2) == kept[2:]
