"""Contract: ``commit_batch`` writes several decisions of one run all or none."""

from __future__ import annotations

import asyncio

from storage import ApprovalRecord, BatchRefusal, DecisionBatch, Storage
from tests.storage.records import at, claim, event


def vote(approver: str, key: str, *, second: float = 0) -> ApprovalRecord:
    return ApprovalRecord(run_id="run-1", key=key, approver=approver, approved_at=at(second))


async def _written(storage: Storage) -> tuple[set[str], list[ApprovalRecord], int]:
    claims = {c.key for c in await storage.list_claims("run-1")}
    approvals = (await storage.list_approvals(["run-1"]))["run-1"]
    return claims, approvals, len(await storage.query_audit(run_id="run-1"))


async def test_a_batch_writes_every_claim_approval_and_event(storage: Storage) -> None:
    batch = DecisionBatch(
        claims=[claim("run-1", "a#0"), claim("run-1", "b#0", second=1)],
        approvals=[vote("U1", "q#0")],
        audit=[event(1, run_id="run-1"), event(2, run_id="run-1")],
    )

    assert await storage.commit_batch(batch) is None

    claims, approvals, events = await _written(storage)
    assert claims == {"a#0", "b#0"}
    assert approvals == [vote("U1", "q#0")]
    assert events == 2
    assert await storage.list_claims("run-1") == [
        claim("run-1", "a#0"),
        claim("run-1", "b#0", second=1),
    ]


async def test_a_claimed_key_refuses_the_whole_batch_naming_it(storage: Storage) -> None:
    first = claim("run-1", "b#0", decided_by="U9")
    await storage.claim(first)
    batch = DecisionBatch(
        claims=[claim("run-1", "a#0"), claim("run-1", "b#0"), claim("run-1", "c#0")],
        approvals=[vote("U1", "q#0")],
        audit=[event(1, run_id="run-1")],
    )

    refused = await storage.commit_batch(batch)

    assert refused == BatchRefusal(run_id="run-1", key="b#0", claim=first)
    assert await _written(storage) == ({"b#0"}, [], 0)


async def test_an_approval_of_a_claimed_key_refuses_the_batch(storage: Storage) -> None:
    first = claim("run-1", "q#0", decision="declined")
    await storage.claim(first)

    refused = await storage.commit_batch(
        DecisionBatch(claims=[claim("run-1", "a#0")], approvals=[vote("U1", "q#0")])
    )

    assert refused == BatchRefusal(run_id="run-1", key="q#0", claim=first)
    assert await _written(storage) == ({"q#0"}, [], 0)


async def test_a_second_approval_by_the_same_person_refuses_the_batch(storage: Storage) -> None:
    await storage.add_approval(vote("U1", "q#0"))

    refused = await storage.commit_batch(
        DecisionBatch(
            claims=[claim("run-1", "a#0")],
            approvals=[vote("U2", "p#0"), vote("U1", "q#0", second=3)],
            audit=[event(1, run_id="run-1")],
        )
    )

    assert refused == BatchRefusal(run_id="run-1", key="q#0", approver="U1")
    assert await _written(storage) == (set(), [vote("U1", "q#0")], 0)


async def test_concurrent_batches_and_single_claims_each_key_is_won_once(
    storage: Storage,
) -> None:
    """Batch n claims keys n*3 .. n*3+2; a single claim races for the middle one of each."""
    batches = [
        DecisionBatch(
            claims=[claim("run-1", f"k{n * 3 + i}#0", decided_by="batch") for i in range(3)]
        )
        for n in range(20)
    ]
    singles = [claim("run-1", f"k{n * 3 + 1}#0", decided_by="single") for n in range(20)]

    results = await asyncio.gather(
        *(storage.commit_batch(b) for b in batches), *(storage.claim(s) for s in singles)
    )

    by_key = {c.key: c.decided_by for c in await storage.list_claims("run-1")}
    for n, refused in enumerate(results[:20]):
        keys = [f"k{n * 3 + i}#0" for i in range(3)]
        if refused is None:
            assert [by_key.get(k) for k in keys] == ["batch"] * 3
            assert results[20 + n] is not None  # the single claim lost
        else:
            assert refused.key == keys[1]
            assert [by_key.get(k) for k in keys] == [None, "single", None]
            assert results[20 + n] is None
