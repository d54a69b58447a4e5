"""Contract: single-use claims, completion, listing, crash-recovery query."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from storage import Storage
from tests.storage.records import at, claim, snapshot


async def test_first_claim_wins_and_later_ones_get_the_stored_record(storage: Storage) -> None:
    first = claim("run-1", "call_1#0", decided_by="U1")

    assert await storage.claim(first) is None
    existing = await storage.claim(claim("run-1", "call_1#0", decided_by="U2", decision="declined"))

    assert existing == first


async def test_fifty_concurrent_claims_have_exactly_one_winner(storage: Storage) -> None:
    contenders = [claim("run-1", "call_1#0", decided_by=f"U{n}") for n in range(50)]

    results = await asyncio.gather(*(storage.claim(c) for c in contenders))

    assert results.count(None) == 1
    winner = contenders[results.index(None)]
    assert all(r == winner for r in results if r is not None)
    assert await storage.list_claims("run-1") == [winner]


async def test_claims_are_per_run_and_key(storage: Storage) -> None:
    assert await storage.claim(claim("run-1", "call_1#0")) is None
    assert await storage.claim(claim("run-1", "call_1#1")) is None
    assert await storage.claim(claim("run-2", "call_1#0")) is None


async def test_complete_claim_records_the_outcome(storage: Storage) -> None:
    record = claim("run-1", "call_1#0")
    await storage.claim(record)

    await storage.complete_claim("run-1", "call_1#0", {"ok": True, "result": [1, 2]})

    [done] = await storage.list_claims("run-1")
    assert done.status == "completed"
    assert done.outcome == {"ok": True, "result": [1, 2]}
    assert done.completed_at is not None and done.completed_at.utcoffset() is not None
    assert dataclasses.replace(done, status="claimed", outcome=None, completed_at=None) == record
    assert await storage.claim(claim("run-1", "call_1#0")) == done


async def test_completion_keeps_a_detail_that_looks_like_a_claim_and_its_key_order(
    storage: Storage,
) -> None:
    # Redis completes a claim inside its script by rewriting the stored JSON: a detail holding
    # the same field names (and quotes in strings) must come through untouched.
    lookalike = {"status": "claimed", "outcome": None, "completed_at": None, "owner": "x"}
    record = claim(
        "run-1",
        "call_1#0",
        detail={"z": 1, **lookalike, "args": lookalike, "note": '","status":"claimed",'},
        owner='o"wner',
        lease_until=at(30),
    )
    await storage.claim(record)

    await storage.complete_claim("run-1", "call_1#0", {"b": 2, "a": 1})

    [done] = await storage.list_claims("run-1")
    assert (done.status, done.outcome, done.owner) == ("completed", {"b": 2, "a": 1}, 'o"wner')
    assert list(done.detail) == ["z", *lookalike, "args", "note"]
    assert done.detail["args"] == lookalike
    assert list(done.outcome or {}) == ["b", "a"]
    assert dataclasses.replace(done, status="claimed", outcome=None, completed_at=None) == record


async def test_completing_twice_keeps_the_last_outcome(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_1#0"))

    await storage.complete_claim("run-1", "call_1#0", {"n": 1})
    await storage.complete_claim("run-1", "call_1#0", {"n": 2})

    [done] = await storage.list_claims("run-1")
    assert (done.status, done.outcome) == ("completed", {"n": 2})


async def test_completing_an_unknown_claim_raises_key_error(storage: Storage) -> None:
    with pytest.raises(KeyError):
        await storage.complete_claim("run-1", "never-claimed", {})


async def test_claims_are_listed_oldest_first_and_outlive_the_snapshot(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.claim(claim("run-1", "call_2#0", second=20))
    await storage.claim(claim("run-1", "call_1#0", second=10))
    await storage.claim(claim("run-2", "call_1#0", second=5))

    await storage.delete_snapshot("run-1")

    assert [c.key for c in await storage.list_claims("run-1")] == ["call_1#0", "call_2#0"]
    assert await storage.list_claims("nothing") == []


async def test_claims_of_several_runs_come_back_per_run_in_one_call(storage: Storage) -> None:
    await storage.claim(claim("run-1", "call_2#0", second=20))
    await storage.claim(claim("run-1", "call_1#0", second=10))
    await storage.claim(claim("run-2", "call_1#0", second=5))
    await storage.claim(claim("run-3", "call_1#0", second=5))

    found = await storage.list_claims_of_runs(["run-1", "run-2", "nothing"])

    assert {run: [c.key for c in cs] for run, cs in found.items()} == {
        "run-1": ["call_1#0", "call_2#0"],
        "run-2": ["call_1#0"],
        "nothing": [],
    }
    assert await storage.list_claims_of_runs([]) == {}


async def test_unfinished_claims_are_the_claimed_ones_before_the_cutoff(storage: Storage) -> None:
    await storage.claim(claim("run-1", "old#0", second=10))
    await storage.claim(claim("run-2", "older#0", second=5))
    await storage.claim(claim("run-1", "done#0", second=1))
    await storage.claim(claim("run-1", "recent#0", second=100))
    await storage.claim(claim("run-3", "born-completed#0", second=2, status="completed"))
    await storage.complete_claim("run-1", "done#0", {"ok": True})

    found = await storage.list_unfinished_claims(at(50))

    assert [(c.run_id, c.key) for c in found] == [("run-2", "older#0"), ("run-1", "old#0")]
    assert await storage.list_unfinished_claims(at(10)) == [found[0]]
