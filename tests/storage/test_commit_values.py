"""Contract: what ``commit`` writes reads back exactly (``load_run`` and the single reads), and a
change that cannot be written writes nothing."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from storage import (
    ApprovalRecord,
    AuditEvent,
    Completion,
    SnapshotVersionConflict,
    StateChange,
    Storage,
    ThreadRecord,
)
from tests.backends import SHARED_BACKENDS, open_storage, survives_reopen, unique_url
from tests.storage.records import T0, at, claim, message, snapshot
from tests.storage.records import event as audit_event

PLUS_TWO = timezone(timedelta(hours=2))
ODD = datetime(2026, 3, 4, 7, 8, 9, 123456, tzinfo=PLUS_TWO)
"""A timestamp with microseconds, given in another time zone than UTC."""
DOCUMENT = {"z": 1, "a": {"y": [3, {"c": None, "b": "é\x00𝄞"}], "x": 1.5}, "m": True}
"""A JSON document whose keys are not in sorted order, at every depth (and a NUL inside)."""


async def _everything(store: Storage) -> tuple[Any, ...]:
    return (
        await store.load_run("run-1"),
        await store.get_thread("T1"),
        await store.list_messages("T1"),
        await store.query_audit(),
    )


async def test_a_change_reads_back_exactly_in_utc_with_key_order(storage_url: str) -> None:
    decision = claim(
        "run-1", "call_1#0", detail=DOCUMENT, owner="A", lease_until=ODD + timedelta(seconds=30)
    )
    decision = dataclasses.replace(decision, decided_at=ODD)
    saved = dataclasses.replace(snapshot("run-1", data=DOCUMENT), suspended_at=ODD)
    thread = ThreadRecord(
        thread_id="T1", resource_id=None, created_at=ODD, updated_at=ODD, metadata=DOCUMENT
    )
    said = [dataclasses.replace(message("T1", n), content=DOCUMENT) for n in range(3)]
    events = [
        AuditEvent(id=f"ev-{n}", at=ODD, kind="decided", run_id="run-1", data=DOCUMENT)
        for n in range(3)
    ]

    async with open_storage(storage_url) as store:
        await store.commit(StateChange(snapshot=saved, thread=thread, messages=said, audit=events))
        await store.commit(StateChange(claim=decision))
        loaded, claims, approvals = await store.load_run("run-1")
        threads, messages, audit = (
            await store.get_thread("T1"),
            await store.list_messages("T1"),
            await store.query_audit(),
        )

    assert (loaded, claims, approvals) == (saved, [decision], [])
    assert (threads, messages, audit) == (thread, said, events)
    documents = [loaded.data, claims[0].detail, threads.metadata] if loaded and threads else []
    documents += [m.content for m in messages] + [e.data for e in audit]
    for document in documents:
        assert list(document) == ["z", "a", "m"] and list(document["a"]["y"][1]) == ["c", "b"]
    if survives_reopen(storage_url):  # stored as UTC, read back as UTC
        stamps = (
            [loaded.suspended_at, claims[0].decided_at, claims[0].lease_until] if loaded else []
        )
        stamps += [threads.created_at] if threads else []
        stamps += [m.created_at for m in messages] + [e.at for e in audit]
        assert all(s is not None and s.tzinfo == UTC for s in stamps), stamps


async def test_completing_keeps_the_outcome_document_and_its_key_order(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_1#0"))

    await storage.commit(
        StateChange(completions=[Completion(run_id="run-1", key="call_1#0", outcome=DOCUMENT)])
    )

    _, [done], _ = await storage.load_run("run-1")
    assert done.status == "completed" and done.outcome == DOCUMENT
    assert list(done.outcome) == ["z", "a", "m"] and done.completed_at is not None


async def test_a_thread_in_a_change_replaces_the_stored_one(storage: Storage) -> None:
    first = ThreadRecord(thread_id="T1", resource_id="U1", created_at=T0, updated_at=T0)
    later = dataclasses.replace(first, resource_id="U2", updated_at=at(5), metadata={"n": 2})

    await storage.commit(StateChange(thread=first))
    await storage.commit(StateChange(thread=later))

    assert await storage.get_thread("T1") == later


async def test_many_messages_and_events_keep_their_order(storage: Storage) -> None:
    await storage.commit(StateChange(messages=[message("T1", 0)], audit=[audit_event(0)]))

    await storage.commit(
        StateChange(
            messages=[message("T1", n) for n in range(1, 40)],
            audit=[audit_event(n, second=100) for n in range(1, 40)],  # same time: insert order
        )
    )

    assert [m.id for m in await storage.list_messages("T1")] == [f"T1-m{n}" for n in range(40)]
    assert [e.id for e in await storage.query_audit()] == [f"ev-{n}" for n in range(40)]


async def test_deleting_a_snapshot_in_a_change_deletes_only_its_approvals(
    storage: Storage,
) -> None:
    for run_id in ("run-1", "run-2"):
        await storage.save_snapshot(snapshot(run_id))
        await storage.add_approval(
            ApprovalRecord(run_id=run_id, key="k", approver="U1", approved_at=T0)
        )

    await storage.commit(StateChange(delete_snapshot="run-1"))

    assert await storage.load_run("run-1") == (None, [], [])
    assert len((await storage.load_run("run-2"))[2]) == 1


async def test_a_snapshot_below_version_one_conflicts_and_writes_nothing(storage: Storage) -> None:
    before = await _everything(storage)

    with pytest.raises(SnapshotVersionConflict):
        await storage.commit(
            StateChange(
                claim=claim("run-1", "call_1#0"),
                snapshot=snapshot("run-1", version=0),
                audit=[audit_event(1)],
            )
        )

    assert await _everything(storage) == before


async def test_creating_an_existing_snapshot_conflicts_and_writes_nothing(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    before = await _everything(storage)

    with pytest.raises(SnapshotVersionConflict) as caught:
        await storage.commit(
            StateChange(
                claim=claim("run-1", "call_1#0"),
                snapshot=snapshot("run-1", second=3),
                thread=ThreadRecord(thread_id="T1", resource_id=None, created_at=T0, updated_at=T0),
                messages=[message("T1", 0)],
            )
        )

    assert (caught.value.run_id, caught.value.expected_version) == ("run-1", 0)
    assert await _everything(storage) == before


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_a_naive_timestamp_is_refused_and_nothing_is_written(
    backend: str, tmp_path: Path
) -> None:
    naive = audit_event(2, run_id="run-1")
    naive = dataclasses.replace(naive, at=naive.at.replace(tzinfo=None))
    async with unique_url(backend, tmp_path) as url, open_storage(url) as store:
        await store.save_snapshot(snapshot("run-1"))
        before = await _everything(store)

        with pytest.raises(ValueError, match="naive datetime"):
            await store.commit(
                StateChange(claim=claim("run-1", "call_1#0"), audit=[audit_event(1), naive])
            )

        assert await _everything(store) == before


async def test_fifty_concurrent_changes_claiming_one_key_apply_exactly_once(
    storage: Storage,
) -> None:
    changes = [
        StateChange(
            claim=claim("run-1", "call_1#0", decided_by=f"U{n}"),
            audit=[audit_event(n, run_id="run-1")],
        )
        for n in range(50)
    ]
    await storage.commit(StateChange())  # first use (migration, connections) done before

    results = await asyncio.gather(*(storage.commit(change) for change in changes))

    [winner] = [n for n, result in enumerate(results) if result is None]
    assert all(result == changes[winner].claim for result in results if result is not None)
    assert [e.id for e in await storage.query_audit()] == [f"ev-{winner}"]
