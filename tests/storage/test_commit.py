"""Contract: ``commit`` writes a whole state change of a run, or nothing of it."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from storage import (
    ApprovalRecord,
    Completion,
    SnapshotVersionConflict,
    SQLStorage,
    StateChange,
    Storage,
    ThreadRecord,
)
from tests.backends import POSTGRES_ENV, unique_url
from tests.postgres_trace import traced_postgres
from tests.sqlite_trace import traced_sqlite
from tests.storage.records import T0, at, claim, message, snapshot
from tests.storage.records import event as audit_event

THREAD = ThreadRecord(thread_id="T1", resource_id="U1", created_at=T0, updated_at=at(1))


async def _state(store: Storage) -> tuple[Any, ...]:
    """Everything a change can touch, to compare before and after."""
    return (
        await store.load_snapshot("run-1"),
        await store.list_claims("run-1"),
        await store.get_thread("T1"),
        await store.list_messages("T1"),
        await store.query_audit(),
        await store.list_approvals(["run-1"]),
    )


async def test_a_claim_alone_is_taken_single_use(storage: Storage) -> None:
    first = claim("run-1", "call_1#0", owner="A", lease_until=at(30))

    assert await storage.commit(StateChange(claim=first)) is None
    assert await storage.commit(StateChange(claim=claim("run-1", "call_1#0"))) == first
    assert await storage.list_claims("run-1") == [first]


async def test_a_completion_alone_completes_the_claim(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_1#0"))

    await storage.commit(
        StateChange(completions=[Completion(run_id="run-1", key="call_1#0", outcome={"ok": 1})])
    )

    [done] = await storage.list_claims("run-1")
    assert done.status == "completed" and done.outcome == {"ok": 1}
    assert await storage.list_unfinished_claims(at(1000)) == []


async def test_snapshot_save_and_delete_alone(storage: Storage) -> None:
    await storage.commit(StateChange(snapshot=snapshot("run-1")))
    assert await storage.load_snapshot("run-1") == snapshot("run-1")

    await storage.commit(StateChange(snapshot=snapshot("run-1", version=2, second=3)))
    assert await storage.load_snapshot("run-1") == snapshot("run-1", version=2, second=3)

    await storage.commit(StateChange(delete_snapshot="run-1"))
    assert await storage.load_snapshot("run-1") is None
    assert await storage.list_snapshots() == ([], 0)


async def test_thread_messages_and_audit_alone(storage: Storage) -> None:
    await storage.commit(StateChange(thread=THREAD))
    await storage.commit(StateChange(messages=[message("T1", n) for n in range(3)]))
    await storage.commit(StateChange(audit=[audit_event(1, run_id="run-1"), audit_event(2)]))

    assert await storage.get_thread("T1") == THREAD
    assert await storage.list_messages("T1") == [message("T1", n) for n in range(3)]
    assert [e.id for e in await storage.query_audit(run_id="run-1")] == ["ev-1"]
    assert [e.id for e in await storage.query_audit()] == ["ev-1", "ev-2"]


async def test_every_part_together_is_applied(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.save_snapshot(snapshot("run-0", thread_id="T1"))
    await storage.claim(claim("run-1", "call_1#0", second=1))
    await storage.add_approval(
        ApprovalRecord(run_id="run-0", key="k", approver="U1", approved_at=T0)
    )
    decision = claim("run-1", "call_2#0", second=2, owner="A", lease_until=at(40))

    applied = await storage.commit(
        StateChange(
            claim=decision,
            completions=[Completion(run_id="run-1", key="call_1#0", outcome={"result": [1, {}]})],
            snapshot=snapshot("run-1", version=2, second=5, decidable=False),
            delete_snapshot="run-0",
            thread=THREAD,
            messages=[message("T1", 0), message("T1", 1)],
            audit=[audit_event(1, run_id="run-1"), audit_event(2, run_id="run-1")],
        )
    )

    assert applied is None
    first, second = await storage.list_claims("run-1")
    assert first.status == "completed" and first.outcome == {"result": [1, {}]}
    assert second == decision
    assert await storage.load_snapshot("run-1") == snapshot(
        "run-1", version=2, second=5, decidable=False
    )
    assert await storage.load_snapshot("run-0") is None
    assert await storage.list_approvals(["run-0"]) == {"run-0": []}
    assert await storage.get_thread("T1") == THREAD
    assert [m.id for m in await storage.list_messages("T1")] == ["T1-m0", "T1-m1"]
    assert [e.id for e in await storage.query_audit(run_id="run-1")] == ["ev-1", "ev-2"]


def _everything_else(version: int) -> dict[str, Any]:
    return {
        "completions": [Completion(run_id="run-1", key="call_1#0", outcome={"ok": True})],
        "snapshot": snapshot("run-1", version=version, second=9),
        "thread": THREAD,
        "messages": [message("T1", 0)],
        "audit": [audit_event(1, run_id="run-1")],
    }


async def test_a_claim_conflict_writes_nothing_and_returns_the_claim(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.claim(claim("run-1", "call_1#0"))
    held = claim("run-1", "call_2#0", decided_by="U9")
    await storage.claim(held)
    before = await _state(storage)

    existing = await storage.commit(
        StateChange(claim=claim("run-1", "call_2#0", decided_by="U2"), **_everything_else(2))
    )

    assert existing == held
    assert await _state(storage) == before


async def test_a_version_conflict_raises_and_writes_nothing(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.claim(claim("run-1", "call_1#0"))
    before = await _state(storage)

    with pytest.raises(SnapshotVersionConflict):
        await storage.commit(
            StateChange(claim=claim("run-1", "call_2#0"), **_everything_else(version=3))
        )

    assert await _state(storage) == before


async def test_completing_a_missing_claim_raises_and_writes_nothing(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    before = await _state(storage)

    with pytest.raises(KeyError):
        await storage.commit(
            StateChange(claim=claim("run-1", "call_2#0"), **_everything_else(version=2))
        )

    assert await _state(storage) == before


async def test_a_typical_change_on_sqlite_is_one_commit(tmp_path: Path) -> None:
    store, trace = traced_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'count.db'}")
    try:
        await store.migrate()
        await store.save_snapshot(snapshot("run-1"))
        await store.claim(claim("run-1", "call_1#0"))
        with trace.counting() as completion:  # outcome + messages + snapshot + audit
            await store.commit(
                StateChange(
                    completions=[Completion(run_id="run-1", key="call_1#0", outcome={"ok": True})],
                    snapshot=dataclasses.replace(snapshot("run-1", version=2), decidable=False),
                    messages=[message("T1", 0), message("T1", 1)],
                    audit=[audit_event(1), audit_event(2)],
                )
            )
    finally:
        await store.close()

    assert completion.write_transactions == 1 and completion.commits == 1
    # one statement per table (SQLite runs an executemany once per row)
    assert [" ".join(s.split()[:3]) for s in completion.statements] == [
        "BEGIN IMMEDIATE",
        "UPDATE claims SET",
        "UPDATE snapshots SET",
        "INSERT INTO messages",
        "INSERT INTO messages",
        "INSERT INTO audit",
        "INSERT INTO audit",
        "COMMIT",
    ], completion.statements


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}")
async def test_a_typical_change_on_postgres_is_one_statement_and_one_round_trip(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store, tap = traced_postgres(url)
        try:
            await store.save_snapshot(snapshot("run-1"))
            await store.claim(claim("run-1", "call_1#0"))
            # asyncpg prepares a statement on its first run on a connection (a round trip)
            await store.commit(StateChange(audit=[audit_event(0)]))
            await store.load_run("run-0")
            with tap.counting() as completion:  # outcome + messages + snapshot + audit
                await store.commit(
                    StateChange(
                        completions=[
                            Completion(run_id="run-1", key="call_1#0", outcome={"ok": True})
                        ],
                        snapshot=dataclasses.replace(snapshot("run-1", version=2), decidable=False),
                        messages=[message("T1", 0), message("T1", 1)],
                        audit=[audit_event(1), audit_event(2)],
                    )
                )
            with tap.counting() as load:
                _, [done], _ = await store.load_run("run-1")
        finally:
            await store.close()

    assert done.outcome == {"ok": True}
    for call in (completion, load):  # one statement, its own transaction, one round trip
        assert len(call.statements) == 1 and call.autocommitted, call.statements
        assert call.round_trips == 1
    assert "countersign_commit" in completion.statements[0].sql
    assert "countersign_load_run" in load.statements[0].sql


async def test_a_given_sqlite_engine_runs_the_same_statements_through_sqlalchemy(
    tmp_path: Path,
) -> None:
    # Not driven in the loop's thread (aiosqlite's own worker): commit, load_run and
    # add_approval go through SQLAlchemy's connection, with the same statements.
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'given.db'}")
    store = SQLStorage(engine)
    try:
        decided = claim("run-1", "call_1#0")
        await store.commit(StateChange(snapshot=snapshot("run-1"), audit=[audit_event(1)]))
        tally = await store.add_approval(
            ApprovalRecord(run_id="run-1", key="call_1#0", approver="U1", approved_at=T0)
        )
        assert tally.added and [a.approver for a in tally.approvals] == ["U1"]
        assert await store.commit(StateChange(claim=decided)) is None
        assert await store.commit(StateChange(claim=claim("run-1", "call_1#0"))) == decided
        with pytest.raises(SnapshotVersionConflict):
            await store.commit(StateChange(snapshot=snapshot("run-1")))
        await store.commit(
            StateChange(
                completions=[Completion(run_id="run-1", key="call_1#0", outcome={"ok": 1})],
                delete_snapshot="run-1",
            )
        )
        found, [done], approvals = await store.load_run("run-1")
        assert found is None and approvals == [] and done.outcome == {"ok": 1}
    finally:
        await store.close()
        await engine.dispose()
