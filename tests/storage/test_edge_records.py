"""Contract: an edge's own records (where its cards are, its outbox) on every backend, kept apart
from audit and memory so that pruning or retention of one never touches the other."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from storage import CardRecord, OutboxEntry, PruneReport, Storage, ThreadRecord
from tests.storage.records import at, claim, event, message, snapshot


def card(run_id: str, tool_call_id: str, *, second: float = 0, **fields: Any) -> CardRecord:
    """A card of ``(run_id, tool_call_id)`` posted ``second`` seconds after ``T0``."""
    defaults: dict[str, Any] = {
        "team": "T1",
        "channel": "C1",
        "ts": f"{second}.000100",
        "thread_ts": "1.000001",
        "shown": {"tool_name": "delete_record", "args": {"id": "7", "tags": []}, "n": [1.5]},
    }
    defaults.update(fields)
    return CardRecord(run_id=run_id, tool_call_id=tool_call_id, posted_at=at(second), **defaults)


def entry(entry_id: str, *, second: float = 0, **fields: Any) -> OutboxEntry:
    """An outbox entry kept ``second`` seconds after ``T0``, due at once."""
    defaults: dict[str, Any] = {
        "write": {"method": "chat.update", "channel": "C1", "ts": "1.0", "blocks": []},
        "next_try_at": at(second),
    }
    defaults.update(fields)
    return OutboxEntry(id=entry_id, created_at=at(second), **defaults)


# -- cards ---------------------------------------------------------------------------------
async def test_a_card_is_put_got_and_listed_with_every_field(storage: Storage) -> None:
    first = card("run-1", "c2", second=1)
    second = card("run-1", "c1", second=2, team="T2", channel="C9", thread_ts="9.9")
    await storage.put_card(second)
    await storage.put_card(first)
    await storage.put_card(card("run-2", "c1", second=0))

    assert await storage.get_card("run-1", "c1") == second
    assert await storage.get_card("run-1", "c3") is None
    assert await storage.get_card("run-3", "c1") is None
    assert await storage.list_cards("run-1") == [first, second]  # oldest posted first
    assert await storage.list_cards("nobody") == []


async def test_posting_a_call_again_replaces_its_card(storage: Storage) -> None:
    await storage.put_card(card("run-1", "c1", second=1, ts="1.1"))
    newer = card("run-1", "c1", second=5, ts="5.5", shown={"title": "again"})
    await storage.put_card(newer)

    assert await storage.get_card("run-1", "c1") == newer
    assert await storage.list_cards("run-1") == [newer]


async def test_a_card_is_written_with_its_presented_audit_event(storage: Storage) -> None:
    shown = event(1, kind="presented", run_id="run-1", tool_call_id="c1")
    await storage.put_card(card("run-1", "c1"), audit=[shown])

    assert await storage.query_audit(run_id="run-1") == [shown]
    assert await storage.get_card("run-1", "c1") is not None


async def test_a_removed_card_is_gone_and_removing_it_again_says_so(storage: Storage) -> None:
    await storage.put_card(card("run-1", "c1"))
    await storage.put_card(card("run-1", "c2"))

    assert await storage.delete_card("run-1", "c1") is True
    assert await storage.delete_card("run-1", "c1") is False
    assert await storage.get_card("run-1", "c1") is None
    assert [c.tool_call_id for c in await storage.list_cards("run-1")] == ["c2"]


# -- outbox --------------------------------------------------------------------------------
async def test_outbox_entries_are_listed_oldest_first_with_their_write_as_put(
    storage: Storage,
) -> None:
    later = entry("b", second=2, write={"method": "chat.postMessage", "blocks": [], "n": 1.5})
    await storage.put_outbox(later)
    await storage.put_outbox(entry("a", second=1))
    await storage.put_outbox(entry("c", second=1))  # same time: by id

    listed = await storage.list_outbox()
    assert [e.id for e in listed] == ["a", "c", "b"]
    assert listed[2] == later
    assert [e.id for e in await storage.list_outbox(limit=2)] == ["a", "c"]
    assert await storage.list_outbox(limit=0) == []


async def test_only_due_entries_are_listed_and_taken_and_a_take_counts_and_holds(
    storage: Storage,
) -> None:
    await storage.put_outbox(entry("now", second=0))
    await storage.put_outbox(entry("later", second=0, next_try_at=at(100)))

    assert [e.id for e in await storage.list_outbox(due_at=at(10))] == ["now"]
    assert await storage.take_outbox("later", now=at(10), retry_at=at(70)) is None
    taken = await storage.take_outbox("now", now=at(10), retry_at=at(70))
    assert taken is not None
    assert (taken.attempts, taken.next_try_at, taken.write) == (1, at(70), entry("x").write)
    assert await storage.take_outbox("now", now=at(20), retry_at=at(80)) is None  # held
    assert await storage.list_outbox(due_at=at(20)) == []
    again = await storage.take_outbox("now", now=at(70), retry_at=at(130))
    assert again is not None and again.attempts == 2
    assert await storage.list_outbox() == [
        entry("later", next_try_at=at(100)),  # same time as "now": by id
        again,
    ]


async def test_an_entry_put_again_is_replaced_so_a_failed_write_can_be_retried_at_once(
    storage: Storage,
) -> None:
    await storage.put_outbox(entry("w", second=0))
    taken = await storage.take_outbox("w", now=at(1), retry_at=at(61))
    assert taken is not None
    await storage.put_outbox(dataclasses.replace(taken, next_try_at=at(1)))  # released

    retaken = await storage.take_outbox("w", now=at(2), retry_at=at(62))
    assert retaken is not None and retaken.attempts == 2
    assert [e.id for e in await storage.list_outbox()] == ["w"]


async def test_concurrent_takes_of_one_entry_give_it_to_exactly_one(storage: Storage) -> None:
    await storage.put_outbox(entry("w", second=0))

    taken = await asyncio.gather(
        *(storage.take_outbox("w", now=at(1), retry_at=at(61)) for _ in range(8))
    )

    assert sum(t is not None for t in taken) == 1


async def test_a_made_entry_is_removed_once(storage: Storage) -> None:
    await storage.put_outbox(entry("a", second=0))
    await storage.put_outbox(entry("b", second=1))

    removed = await asyncio.gather(*(storage.remove_outbox("a") for _ in range(4)))

    assert sorted(removed) == [False, False, False, True]
    assert [e.id for e in await storage.list_outbox()] == ["b"]
    assert await storage.take_outbox("a", now=at(5), retry_at=at(65)) is None


# -- pruning and retention keep them apart -------------------------------------------------
async def test_pruning_audit_keeps_every_card(storage: Storage) -> None:
    # a failed run (retryable, its snapshot recent) shown before the cutoff: its audit goes
    await storage.save_snapshot(snapshot("failed", second=100, decidable=False))
    shown = event(1, kind="presented", run_id="failed", tool_call_id="c1")
    await storage.put_card(card("failed", "c1", second=1), audit=[shown])
    await storage.save_snapshot(snapshot("pending", second=0))
    await storage.put_card(card("pending", "c1", second=1))

    report = await storage.prune(before=at(20), audit=True)

    assert (report.audit_events, report.cards) == (1, 0)
    assert await storage.query_audit(run_id="failed") == []
    assert await storage.get_card("failed", "c1") == card("failed", "c1", second=1)
    assert await storage.get_card("pending", "c1") is not None


async def test_cards_of_ended_runs_go_with_their_claims_and_pending_ones_stay(
    storage: Storage,
) -> None:
    await storage.save_snapshot(snapshot("pending", second=0))
    await storage.put_card(card("pending", "c1", second=1))
    await storage.put_card(card("ended", "c1", second=1))
    await storage.put_card(card("ended", "c2", second=50))  # posted after the cutoff
    await storage.claim(claim("ended", "c1#0", status="completed", completed_at=at(2)))
    await storage.append_audit(event(1, kind="presented", run_id="ended", tool_call_id="c1"))

    report = await storage.prune(before=at(20))

    assert report == PruneReport(claims=1, cards=1)
    assert await storage.get_card("ended", "c1") is None
    assert [c.tool_call_id for c in await storage.list_cards("ended")] == ["c2"]
    assert await storage.get_card("pending", "c1") is not None
    assert len(await storage.query_audit(run_id="ended")) == 1  # audit without --audit: kept


async def test_a_failed_run_pruned_takes_its_cards_along(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("failed", second=0, decidable=False))
    await storage.put_card(card("failed", "c1", second=1))

    report = await storage.prune(before=at(20))

    assert (report.snapshots, report.cards) == (1, 1)
    assert await storage.list_cards("failed") == []


async def test_no_pruning_ever_touches_the_outbox(storage: Storage) -> None:
    await storage.put_outbox(entry("old", second=0))
    await storage.put_outbox(entry("older", second=-100, next_try_at=at(5000)))
    now = at(10_000)
    await storage.save_thread(
        ThreadRecord(thread_id="t", resource_id=None, created_at=now, updated_at=now)
    )
    await storage.append_messages([message("t", 0)])

    await storage.prune(before=now)
    await storage.prune(before=now, audit=True)

    assert [e.id for e in await storage.list_outbox()] == ["older", "old"]
    assert await storage.list_messages("t") == [message("t", 0)]


async def test_the_outbox_is_no_memory_thread_and_cards_are_no_audit_events(
    storage: Storage,
) -> None:
    await storage.put_outbox(entry("w", second=0))
    await storage.put_card(card("run-1", "c1"))

    assert await storage.query_audit() == []
    assert await storage.list_messages("countersign:slack-outbox") == []
    assert await storage.get_thread("countersign:slack-outbox") is None
