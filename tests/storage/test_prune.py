"""Contract: ``prune`` removes what finished runs left behind, never a pending run's records."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from storage import (
    ApprovalRecord,
    ClaimRecord,
    PruneReport,
    StateChange,
    Storage,
    ThreadRecord,
    utcnow,
)
from storage.redis import _prune as _redis_prune
from tests.storage.records import at, claim, event, message, snapshot


def done(run_id: str, key: str, *, second: float) -> ClaimRecord:
    """A claim completed ``second`` seconds after ``T0``."""
    return claim(run_id, key, status="completed", outcome={"ok": True}, completed_at=at(second))


def approval(run_id: str, approver: str, *, second: float, key: str = "call_1#0") -> ApprovalRecord:
    return ApprovalRecord(run_id=run_id, key=key, approver=approver, approved_at=at(second))


async def finished_run(storage: Storage, run_id: str, *, completed: float) -> None:
    """A run that suspended, was decided, ran its tool and ended (its snapshot deleted)."""
    await storage.save_snapshot(snapshot(run_id, second=0))
    await storage.claim(done(run_id, "call_1#0", second=completed))
    await storage.delete_snapshot(run_id)


async def test_a_finished_runs_completed_claims_are_pruned(storage: Storage) -> None:
    await finished_run(storage, "run-1", completed=10)

    report = await storage.prune(before=at(20))

    assert report == PruneReport(claims=1)
    assert await storage.list_claims("run-1") == []


async def test_the_cutoff_is_respected_and_now_prunes_everything_finished(
    storage: Storage,
) -> None:
    await finished_run(storage, "old", completed=10)
    await finished_run(storage, "recent", completed=30)
    await storage.claim(claim("live", "call_1#0"))
    await storage.complete_claim("live", "call_1#0", {"ok": True})  # completed just now

    assert (await storage.prune(before=at(20))).claims == 1
    assert await storage.list_claims("old") == []
    assert [c.key for c in await storage.list_claims("recent")] == ["call_1#0"]

    assert (await storage.prune(before=utcnow())).claims == 2  # "--older-than 0d"
    assert await storage.list_claims_of_runs(["recent", "live"]) == {"recent": [], "live": []}


async def test_a_pending_run_is_untouched(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1", second=0))
    await storage.claim(done("run-1", "call_1#0", second=1))
    await storage.add_approval(approval("run-1", "U1", second=2, key="call_2#1"))
    await storage.append_audit(event(1, run_id="run-1"))
    before = await storage.load_run("run-1")

    report = await storage.prune(before=utcnow() + timedelta(days=1), audit=True)

    assert report == PruneReport()
    assert await storage.load_run("run-1") == before
    assert [e.id for e in await storage.query_audit(run_id="run-1")] == ["ev-1"]


async def test_a_claim_still_claimed_is_never_pruned(storage: Storage) -> None:
    in_flight = claim("run-1", "call_1#0", second=0)
    await storage.claim(in_flight)
    await storage.save_snapshot(snapshot("run-2", second=0, decidable=False))
    await storage.claim(claim("run-2", "call_1#0", second=0))

    report = await storage.prune(before=utcnow() + timedelta(days=1))

    assert report == PruneReport()
    assert await storage.list_claims("run-1") == [in_flight]
    assert await storage.load_snapshot("run-2") is not None  # its tool is still running


async def test_an_old_failed_run_is_pruned_and_a_recent_one_kept_for_retry(
    storage: Storage,
) -> None:
    await storage.save_snapshot(snapshot("old", second=0, decidable=False, thread_id="T1"))
    await storage.claim(done("old", "call_1#0", second=0))
    await storage.add_approval(approval("old", "U1", second=0, key="call_2#1"))
    await storage.save_snapshot(snapshot("recent", second=30, decidable=False, thread_id="T1"))

    report = await storage.prune(before=at(20))

    assert report == PruneReport(snapshots=1, claims=1, approvals=1)
    assert await storage.load_run("old") == (None, [], [])
    found, total = await storage.list_snapshots(thread_id="T1")
    assert [s.run_id for s in found] == ["recent"] and total == 1
    assert (await storage.list_snapshots())[1] == 1


async def test_approvals_left_after_their_run_ended_are_pruned_by_age(storage: Storage) -> None:
    await storage.add_approval(approval("gone", "U1", second=1))
    await storage.add_approval(approval("gone", "U2", second=30))

    report = await storage.prune(before=at(20))

    assert report == PruneReport(approvals=1)
    assert [a.approver for a in (await storage.list_approvals(["gone"]))["gone"]] == ["U2"]


async def test_audit_is_kept_unless_asked_and_then_only_older_events_go(storage: Storage) -> None:
    for n in (1, 2, 30):
        await storage.append_audit(event(n, run_id=f"run-{n}", thread_id="T1"))

    assert (await storage.prune(before=at(10))).audit_events == 0
    assert len(await storage.query_audit()) == 3

    report = await storage.prune(before=at(10), audit=True)

    assert report.audit_events == 2
    assert [e.id for e in await storage.query_audit()] == ["ev-30"]
    assert [e.id for e in await storage.query_audit(thread_id="T1")] == ["ev-30"]
    assert await storage.query_audit(run_id="run-1") == []


async def test_memory_threads_and_messages_are_kept(storage: Storage) -> None:
    thread = ThreadRecord(thread_id="T1", resource_id="U1", created_at=at(0), updated_at=at(0))
    await storage.commit(
        StateChange(thread=thread, messages=[message("T1", 0, run_id="run-1"), message("T1", 1)])
    )
    await finished_run(storage, "run-1", completed=1)

    await storage.prune(before=utcnow() + timedelta(days=1), audit=True)

    assert await storage.get_thread("T1") == thread
    assert [m.id for m in await storage.list_messages("T1")] == ["T1-m0", "T1-m1"]


async def test_expired_values_go_and_live_ones_stay(storage: Storage) -> None:
    assert await storage.add_if_absent("short", "1", 0.05)
    assert await storage.add_if_absent("long", "2", 60)
    await asyncio.sleep(0.1)

    report = await storage.prune(before=at(0))

    assert report.values <= 1 and report.total == report.values
    assert await storage.get_value("long") == "2"
    assert await storage.get_value("short") is None


async def test_pruning_goes_through_many_batches_and_keeps_pending_runs_between_them(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_prune, "BATCH", 4)  # Redis reads and deletes in batches
    for n in range(10):
        await storage.save_snapshot(snapshot(f"pending-{n}", second=n))
        await storage.save_snapshot(snapshot(f"failed-{n}", second=n, decidable=False))
        await storage.append_audit(event(n, run_id=f"pending-{n}"))
        await storage.append_audit(event(100 + n, second=n, run_id=f"failed-{n}"))
        await finished_run(storage, f"done-{n}", completed=n)

    report = await storage.prune(before=at(50), audit=True)

    assert report == PruneReport(snapshots=10, claims=10, audit_events=10)
    found, total = await storage.list_snapshots(decidable_only=True)
    assert total == 10 and all(s.run_id.startswith("pending-") for s in found)
    assert (await storage.list_snapshots())[1] == 10
    assert len(await storage.query_audit()) == 10
