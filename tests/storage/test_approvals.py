"""Contract: quorum approvals, batched reads of a run, listing only decidable runs."""

from __future__ import annotations

import asyncio

from storage import ApprovalRecord, SnapshotRecord, StateChange, Storage
from tests.storage.records import at, claim, snapshot


def approval(approver: str, *, second: float = 0, key: str = "call_1#0") -> ApprovalRecord:
    return ApprovalRecord(run_id="run-1", key=key, approver=approver, approved_at=at(second))


async def test_distinct_approvers_are_counted_oldest_first(storage: Storage) -> None:
    first = await storage.add_approval(approval("U2", second=1))
    second = await storage.add_approval(approval("U1", second=2))
    await storage.add_approval(approval("U3", second=3, key="other#0"))

    assert first.added and first.approvals == [approval("U2", second=1)]
    assert second.added and second.claim is None
    assert second.approvals == [approval("U2", second=1), approval("U1", second=2)]


async def test_the_same_approver_twice_is_not_added(storage: Storage) -> None:
    await storage.add_approval(approval("U1", second=1))

    again = await storage.add_approval(approval("U1", second=5))

    assert not again.added
    assert again.approvals == [approval("U1", second=1)]


async def test_concurrent_approvers_are_each_recorded_exactly_once(storage: Storage) -> None:
    approvers = [f"U{n}" for n in range(30)]

    tallies = await asyncio.gather(
        # each approver twice, at the same moment: whichever add wins, the record is the same
        *(
            storage.add_approval(approval(a, second=n % len(approvers)))
            for n, a in enumerate(approvers * 2)
        )
    )

    assert sum(t.added for t in tallies) == len(approvers)
    found = await storage.list_approvals(["run-1"])
    assert [a.approver for a in found["run-1"]] == approvers


async def test_an_approval_after_the_claim_adds_nothing_and_returns_it(storage: Storage) -> None:
    await storage.add_approval(approval("U1", second=1))
    decided = claim("run-1", "call_1#0", decided_by="U2")
    await storage.claim(decided)

    tally = await storage.add_approval(approval("U3", second=2))

    assert not tally.added and tally.claim == decided
    assert tally.approvals == [approval("U1", second=1)]


async def test_approvals_of_a_page_of_runs_and_their_deletion(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.save_snapshot(snapshot("run-2"))
    await storage.add_approval(approval("U1"))
    await storage.add_approval(
        ApprovalRecord(run_id="run-2", key="k", approver="U1", approved_at=at(0))
    )
    await storage.add_approval(
        ApprovalRecord(run_id="run-3", key="k", approver="U1", approved_at=at(0))
    )

    found = await storage.list_approvals(["run-1", "run-2", "nothing"])
    await storage.delete_snapshot("run-1")
    await storage.commit(StateChange(delete_snapshot="run-2"))

    assert {run: len(a) for run, a in found.items()} == {"run-1": 1, "run-2": 1, "nothing": 0}
    assert await storage.list_approvals(["run-1", "run-2", "run-3"]) == {
        "run-1": [],
        "run-2": [],
        "run-3": [ApprovalRecord(run_id="run-3", key="k", approver="U1", approved_at=at(0))],
    }
    assert await storage.list_approvals([]) == {}


async def test_load_run_reads_snapshot_claims_and_approvals(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1", thread_id="T1"))
    await storage.claim(claim("run-1", "call_2#0", second=20))
    await storage.claim(claim("run-1", "call_1#0", second=10))
    await storage.claim(claim("run-2", "call_1#0", second=5))
    await storage.add_approval(approval("U1", key="call_3#0"))

    loaded, claims, approvals = await storage.load_run("run-1")

    assert loaded == snapshot("run-1", thread_id="T1")
    assert claims == await storage.list_claims("run-1")
    assert [c.key for c in claims] == ["call_1#0", "call_2#0"]
    assert approvals == [approval("U1", key="call_3#0")]
    assert await storage.load_run("nothing") == (None, [], [])


async def test_decidable_only_counts_and_pages_decidable_runs(storage: Storage) -> None:
    for n in range(6):
        await storage.save_snapshot(
            snapshot(f"run-{n}", second=n, thread_id="T1", decidable=n % 3 != 0)
        )
    await storage.save_snapshot(snapshot("run-4", version=2, second=4, decidable=False))

    def ids(found: list[SnapshotRecord]) -> list[str]:
        return [s.run_id for s in found]

    page, total = await storage.list_snapshots(decidable_only=True, limit=2)
    rest, _ = await storage.list_snapshots(decidable_only=True, offset=2, limit=2)
    in_thread, thread_total = await storage.list_snapshots(thread_id="T1", decidable_only=True)
    everything, all_total = await storage.list_snapshots()

    assert (ids(page), total) == (["run-5", "run-2"], 3)
    assert ids(rest) == ["run-1"]
    assert (ids(in_thread), thread_total) == (["run-5", "run-2", "run-1"], 3)
    assert all_total == 6 and len(everything) == 6
    assert (await storage.load_snapshot("run-3")) == snapshot(
        "run-3", second=3, thread_id="T1", decidable=False
    )


async def test_concurrent_approvers_each_see_every_approval_before_theirs(storage: Storage) -> None:
    # So that exactly one of them is the N-th (the one that claims) whatever N is.
    tallies = await asyncio.gather(
        *(storage.add_approval(approval(f"U{n}", second=n)) for n in range(12))
    )
    assert sorted(len(t.approvals) for t in tallies) == list(range(1, 13))
