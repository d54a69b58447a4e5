"""Contract: the append-only audit log, queryable by run, tool call, thread and time."""

from __future__ import annotations

from storage import AuditEvent, Storage
from tests.storage.records import at, event


async def _fill(storage: Storage) -> None:
    await storage.append_audit(event(3, run_id="r1", tool_call_id="c2", thread_id="T1"))
    await storage.append_audit(event(1, run_id="r1", tool_call_id="c1", thread_id="T1"))
    await storage.append_audit(event(2, run_id="r2", tool_call_id="c1", thread_id="T2"))
    await storage.append_audit(event(4, run_id="r1", tool_call_id="c1", thread_id="T2"))
    await storage.append_audit(event(5, kind="expired", source="expiry", actor="system"))


def _ns(events: list[AuditEvent]) -> list[int]:
    return [e.data["n"] for e in events]


async def test_events_round_trip_and_come_back_oldest_first(storage: Storage) -> None:
    await _fill(storage)

    found = await storage.query_audit()

    assert _ns(found) == [1, 2, 3, 4, 5]
    assert found[0] == event(1, run_id="r1", tool_call_id="c1", thread_id="T1")
    assert found[-1].at.utcoffset() is not None


async def test_query_by_run_tool_call_and_thread(storage: Storage) -> None:
    await _fill(storage)

    assert _ns(await storage.query_audit(run_id="r1")) == [1, 3, 4]
    assert _ns(await storage.query_audit(tool_call_id="c1")) == [1, 2, 4]
    assert _ns(await storage.query_audit(thread_id="T2")) == [2, 4]
    assert _ns(await storage.query_audit(run_id="r1", tool_call_id="c1")) == [1, 4]
    assert _ns(await storage.query_audit(run_id="r1", tool_call_id="c1", thread_id="T2")) == [4]
    assert await storage.query_audit(run_id="nothing") == []


async def test_time_range_includes_since_and_excludes_until(storage: Storage) -> None:
    await _fill(storage)

    assert _ns(await storage.query_audit(since=at(2), until=at(4))) == [2, 3]
    assert _ns(await storage.query_audit(since=at(4))) == [4, 5]
    assert _ns(await storage.query_audit(run_id="r1", until=at(4))) == [1, 3]


async def test_limit_keeps_the_oldest_matches(storage: Storage) -> None:
    await _fill(storage)

    assert _ns(await storage.query_audit(limit=2)) == [1, 2]
    assert _ns(await storage.query_audit(run_id="r1", tool_call_id="c1", limit=1)) == [1]
    assert await storage.query_audit(limit=0) == []


async def test_events_at_the_same_instant_keep_append_order(storage: Storage) -> None:
    for n in range(12):
        await storage.append_audit(event(n, second=0, run_id="r1"))

    assert _ns(await storage.query_audit(run_id="r1")) == list(range(12))
