"""Contract: claim owners renew leases; any instance takes over claims whose lease ran out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from storage import Completion, StateChange, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.records import at, claim


async def test_owner_and_lease_round_trip_with_utc(storage: Storage) -> None:
    record = claim("run-1", "call_1#0", owner="A", lease_until=at(30))
    await storage.claim(record)

    [loaded] = await storage.list_claims("run-1")

    assert loaded == record
    assert loaded.lease_until is not None and loaded.lease_until.utcoffset() is not None


async def test_only_the_owner_of_a_claimed_claim_renews_it(storage: Storage) -> None:
    await storage.claim(claim("run-1", "k#0", owner="A", lease_until=at(30)))
    await storage.claim(claim("run-1", "done#0", owner="A", lease_until=at(30)))
    await storage.complete_claim("run-1", "done#0", {"ok": True})

    assert await storage.renew_lease("run-1", "k#0", "A", at(60)) is True
    assert await storage.renew_lease("run-1", "k#0", "B", at(90)) is False
    assert await storage.renew_lease("run-1", "done#0", "A", at(90)) is False
    assert await storage.renew_lease("run-1", "missing#0", "A", at(90)) is False
    [renewed, _] = sorted(await storage.list_claims("run-1"), key=lambda c: c.key != "k#0")
    assert renewed.owner == "A" and renewed.lease_until == at(60)


async def test_expired_and_leaseless_claims_are_taken_over_once(storage: Storage) -> None:
    await storage.claim(claim("run-1", "expired#0", second=1, owner="A", lease_until=at(10)))
    await storage.claim(claim("run-1", "live#0", second=2, owner="A", lease_until=at(100)))
    await storage.claim(claim("run-2", "old#0", second=3))  # written before leases: no lease
    await storage.claim(claim("run-2", "done#0", second=4, owner="A", lease_until=at(10)))
    await storage.commit(
        StateChange(completions=[Completion(run_id="run-2", key="done#0", outcome={})])
    )

    taken = await storage.take_over_expired_claims("B", now=at(50), lease_until=at(80))

    assert [(c.run_id, c.key, c.owner, c.lease_until) for c in taken] == [
        ("run-1", "expired#0", "B", at(80)),
        ("run-2", "old#0", "B", at(80)),
    ]
    assert taken[0] == claim("run-1", "expired#0", second=1, owner="B", lease_until=at(80), epoch=1)
    assert await storage.take_over_expired_claims("C", now=at(50), lease_until=at(90)) == []
    assert await storage.renew_lease("run-1", "expired#0", "A", at(200)) is False
    assert await storage.renew_lease("run-1", "expired#0", "B", at(200), epoch=1) is True
    assert {c.key: c.owner for c in await storage.list_claims("run-1")} == {
        "expired#0": "B",
        "live#0": "A",
    }


async def test_take_over_respects_the_limit(storage: Storage) -> None:
    for n in range(5):
        await storage.claim(claim("run-1", f"k#{n}", second=n, owner="A", lease_until=at(1)))

    first = await storage.take_over_expired_claims("B", now=at(9), lease_until=at(99), limit=2)
    rest = await storage.take_over_expired_claims("C", now=at(9), lease_until=at(99))

    assert [c.key for c in first] == ["k#0", "k#1"]
    assert [c.key for c in rest] == ["k#2", "k#3", "k#4"]


async def test_concurrent_take_overs_never_share_a_claim(storage: Storage) -> None:
    keys = {f"k#{n}" for n in range(60)}
    for n, key in enumerate(sorted(keys)):
        await storage.claim(claim("run-1", key, second=n, owner="dead", lease_until=at(1)))

    results = await asyncio.gather(
        *(
            storage.take_over_expired_claims(f"I{n}", now=at(9), lease_until=at(99), limit=7)
            for n in range(20)
        )
    )

    won = [c.key for taken in results for c in taken]
    assert len(won) == len(set(won)) == len(keys)
    owners = {c.key: c.owner for c in await storage.list_claims("run-1")}
    assert owners == {c.key: c.owner for taken in results for c in taken}


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_stores_on_one_url_never_share_a_claim(backend: str, tmp_path: Path) -> None:
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as a,
        open_storage(url) as b,
    ):
        for n in range(80):
            await a.claim(claim("run-1", f"k#{n}", second=n, owner="dead", lease_until=at(1)))

        async def take(store: Storage, owner: str) -> list[str]:
            won: list[str] = []
            for _ in range(10):
                taken = await store.take_over_expired_claims(
                    owner, now=at(9), lease_until=at(99), limit=5
                )
                won += [c.key for c in taken]
            return won

        results = await asyncio.gather(
            *(take(s, f"{s is a}-{n}") for s in (a, b) for n in range(3))
        )
        claims = await b.list_claims("run-1")

    won = [key for keys in results for key in keys]
    assert len(won) == len(set(won)) == 80
    assert all(c.owner != "dead" for c in claims)
