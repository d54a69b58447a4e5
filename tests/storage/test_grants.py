"""Contract: standing grants are stored with the approval that creates them and used, counted
and refused atomically with the claim they approve, on every backend (SPEC 15)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from storage import GrantRecord, GrantUnavailable, GrantUse, StateChange, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.records import at, claim, event, snapshot


def grant(grant_id: str = "g1", **fields: Any) -> GrantRecord:
    """A grant of ``delete-record`` in thread T1, created at ``T0``, for an hour, 3 uses."""
    defaults: dict[str, Any] = {
        "agent_id": "ops",
        "tool_name": "delete-record",
        "agent_path": ["ops"],
        "thread_id": "T1",
        "resource_id": None,
        "pins": {"id": "abc", "nested": {"a": [1, 2]}},
        "granted_by": "U1",
        "created_at": at(0),
        "expires_at": at(3600),
        "max_uses": 3,
        "free_args": ["note"],
        "run_id": "run-0",
        "tool_call_id": "c0",
    }
    defaults.update(fields)
    return GrantRecord(grant_id=grant_id, **defaults)


def use(key: str, second: float = 10, grant_id: str = "g1") -> StateChange:
    """A claim of ``run-1``'s ``key`` approved by a use of ``grant_id`` at ``second``."""
    return StateChange(
        claim=claim("run-1", key, second=second, detail={"source": "grant", "grant_id": grant_id}),
        audit=[event(int(second), run_id="run-1", tool_call_id=key.split("#")[0])],
        grant_uses=[GrantUse(grant_id=grant_id, at=at(second))],
    )


async def test_a_grant_is_stored_with_the_claim_that_creates_it(storage: Storage) -> None:
    created = grant()
    assert await storage.commit(StateChange(claim=claim("run-0", "c0#0"), grant=created)) is None

    assert await storage.get_grant("g1") == created
    assert await storage.list_grants() == [created]


async def test_a_grant_keeps_the_rule_and_the_definition_it_was_made_for(
    storage: Storage,
) -> None:
    created = grant(rule="rule-2@0123abcd", definition_digest="d" * 64)
    assert await storage.commit(StateChange(claim=claim("run-0", "c0#0"), grant=created)) is None

    stored = await storage.get_grant("g1")
    assert stored is not None
    assert (stored.rule, stored.definition_digest) == ("rule-2@0123abcd", "d" * 64)
    assert await storage.list_grants() == [created]


async def test_a_grant_is_not_stored_when_its_claim_was_taken_first(storage: Storage) -> None:
    await storage.claim(claim("run-0", "c0#0", decided_by="U2"))

    existing = await storage.commit(StateChange(claim=claim("run-0", "c0#0"), grant=grant()))

    assert existing is not None and existing.decided_by == "U2"
    assert await storage.get_grant("g1") is None


async def test_each_use_is_counted_with_its_claim(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant()))

    assert await storage.commit(use("c1#0")) is None
    assert await storage.commit(use("c2#0", second=11)) is None

    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 2
    assert [c.key for c in await storage.list_claims("run-1")] == ["c1#0", "c2#0"]


async def test_the_use_past_max_uses_writes_nothing(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant(max_uses=1)))
    await storage.commit(use("c1#0"))

    with pytest.raises(GrantUnavailable) as refused:
        await storage.commit(use("c2#0", second=11))

    assert refused.value.grant_id == "g1"
    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 1
    assert [c.key for c in await storage.list_claims("run-1")] == ["c1#0"]
    assert len(await storage.query_audit(run_id="run-1")) == 1


async def test_a_use_at_or_after_expiry_writes_nothing(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant()))

    with pytest.raises(GrantUnavailable):
        await storage.commit(use("c1#0", second=3600))

    assert await storage.list_claims("run-1") == []
    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 0


async def test_a_revoked_grant_approves_nothing_more(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant()))

    revoked = await storage.revoke_grant("g1", revoked_by="U9", at=at(5))
    again = await storage.revoke_grant("g1", revoked_by="U8", at=at(6))

    assert revoked is not None and revoked.revoked_at == at(5) and revoked.revoked_by == "U9"
    assert again == revoked
    with pytest.raises(GrantUnavailable):
        await storage.commit(use("c1#0"))
    assert await storage.list_claims("run-1") == []
    assert await storage.revoke_grant("nope", revoked_by="U9", at=at(5)) is None


async def test_an_unknown_grant_is_refused(storage: Storage) -> None:
    with pytest.raises(GrantUnavailable):
        await storage.commit(use("c1#0", grant_id="nope"))
    assert await storage.list_claims("run-1") == []


async def test_a_use_on_a_taken_claim_is_not_counted(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant()))
    await storage.claim(claim("run-1", "c1#0", decided_by="U2"))

    existing = await storage.commit(use("c1#0"))

    assert existing is not None and existing.decided_by == "U2"
    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 0


async def test_listing_filters_by_scope_grantor_tool_and_activity(storage: Storage) -> None:
    in_thread = grant("g1", created_at=at(1))
    in_channel = grant("g2", thread_id=None, resource_id="C1", created_at=at(2))
    other = grant("g3", thread_id="T2", granted_by="U2", tool_name="refund", created_at=at(3))
    used_up = grant("g4", max_uses=0, created_at=at(4))
    for g in (in_thread, in_channel, other, used_up):
        await storage.commit(StateChange(grant=g))

    assert await storage.list_grants() == [used_up, other, in_channel, in_thread]
    assert await storage.list_grants(thread_id="T1", resource_id="C1") == [
        used_up,
        in_channel,
        in_thread,
    ]
    assert await storage.list_grants(thread_id="T1") == [used_up, in_thread]
    assert await storage.list_grants(resource_id="C1") == [in_channel]
    assert await storage.list_grants(granted_by="U2") == [other]
    assert await storage.list_grants(tool_name="refund", agent_id="ops") == [other]
    assert await storage.list_grants(agent_id="billing") == []
    assert await storage.list_grants(active_at=at(10)) == [other, in_channel, in_thread]
    assert await storage.list_grants(active_at=at(4000)) == []


async def test_concurrent_uses_of_the_last_ones_run_exactly_max_uses(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant(max_uses=3)))

    async def one(n: int) -> bool:
        try:
            return await storage.commit(use(f"c{n}#0")) is None
        except GrantUnavailable:
            return False

    won = await asyncio.gather(*(one(n) for n in range(12)))

    assert sum(won) == 3
    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 3
    assert len(await storage.list_claims("run-1")) == 3


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_stores_on_one_database_share_the_uses(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        await _share_uses(url)


async def _share_uses(url: str) -> None:
    async with open_storage(url) as first, open_storage(url) as second:
        await first.commit(StateChange(grant=grant(max_uses=5)))

        async def one(store: Storage, n: int) -> bool:
            try:
                return await store.commit(use(f"c{n}#0")) is None
            except GrantUnavailable:
                return False

        won = await asyncio.gather(*(one((first, second)[n % 2], n) for n in range(20)))

        assert sum(won) == 5
        stored = await second.get_grant("g1")
        assert stored is not None and stored.uses == 5
        await second.revoke_grant("g1", revoked_by="U1", at=at(20))
        revoked = await first.get_grant("g1")
        assert revoked is not None and dataclasses.replace(revoked, revoked_at=None) == (
            dataclasses.replace(stored, revoked_by="U1")
        )


def granted_step(*uses: str, taken: tuple[str, ...] = ("c1#0", "c2#0")) -> StateChange:
    """One model step of ``run-1`` stored with its calls ``taken`` decided by the grants
    ``uses`` (one per call), the snapshot and the audit in the same change."""
    first, *more = (
        claim("run-1", key, second=10, detail={"source": "grant", "grant_id": g})
        for key, g in zip(taken, uses, strict=True)
    )
    return StateChange(
        claim=first,
        claims=more,
        snapshot=snapshot("run-1"),
        audit=[event(10 + n, run_id="run-1") for n in range(len(uses))],
        grant_uses=[GrantUse(grant_id=g, at=at(10)) for g in uses],
    )


async def _nothing_of_run_1(storage: Storage, *, uses: int = 0) -> None:
    assert await storage.list_claims("run-1") == []
    assert await storage.load_snapshot("run-1") is None
    assert await storage.query_audit(run_id="run-1") == []
    for g in await storage.list_grants():
        assert g.uses == uses


async def test_one_change_takes_several_claims_and_counts_each_grant_use(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant("g1")))
    await storage.commit(StateChange(grant=grant("g2", created_at=at(1))))

    assert await storage.commit(granted_step("g1", "g2", "g1", taken=("a#0", "b#0", "c#0"))) is None

    assert sorted(c.key for c in await storage.list_claims("run-1")) == ["a#0", "b#0", "c#0"]
    assert await storage.load_snapshot("run-1") == snapshot("run-1")
    assert len(await storage.query_audit(run_id="run-1")) == 3
    uses = {g.grant_id: g.uses for g in await storage.list_grants()}
    assert uses == {"g1": 2, "g2": 1}


async def test_a_further_claim_taken_first_writes_nothing_and_returns_it(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant("g1")))
    await storage.claim(claim("run-1", "c2#0", decided_by="U2"))

    existing = await storage.commit(granted_step("g1", "g1"))

    assert existing is not None and (existing.key, existing.decided_by) == ("c2#0", "U2")
    assert [c.key for c in await storage.list_claims("run-1")] == ["c2#0"]
    assert await storage.load_snapshot("run-1") is None
    assert await storage.query_audit(run_id="run-1") == []
    stored = await storage.get_grant("g1")
    assert stored is not None and stored.uses == 0


@pytest.mark.parametrize("used", [0, 2], ids=["one-use", "one-use-left"])
async def test_a_grant_with_one_use_left_refuses_a_change_that_uses_it_twice(
    storage: Storage, used: int
) -> None:
    await storage.commit(StateChange(grant=grant("g1", uses=used, max_uses=used + 1)))

    with pytest.raises(GrantUnavailable) as refused:
        await storage.commit(granted_step("g1", "g1"))

    assert refused.value.grant_id == "g1"
    await _nothing_of_run_1(storage, uses=used)


async def test_a_refused_second_grant_refuses_the_whole_change(storage: Storage) -> None:
    await storage.commit(StateChange(grant=grant("g1")))
    await storage.commit(StateChange(grant=grant("g2", created_at=at(1))))
    await storage.revoke_grant("g2", revoked_by="U1", at=at(5))

    with pytest.raises(GrantUnavailable) as refused:
        await storage.commit(granted_step("g1", "g2"))

    assert refused.value.grant_id == "g2"
    await _nothing_of_run_1(storage)


def test_further_claims_need_a_first_one_and_distinct_keys() -> None:
    with pytest.raises(ValueError, match="claim"):
        StateChange(claims=[claim("run-1", "c1#0")])
    with pytest.raises(ValueError, match="c1#0"):
        StateChange(claim=claim("run-1", "c1#0"), claims=[claim("run-1", "c1#0")])
