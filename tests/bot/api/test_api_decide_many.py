"""SPEC 3.3 / 7: ``POST .../decide-many`` and ``Client.decide_many``: one transaction, all or
nothing, refusals mapped to the single decision's statuses and naming the call."""

from __future__ import annotations

import hashlib

import pytest

from agents import AlreadyDecided, Approve, Decline, FingerprintMismatch, NotAllowedToDecide
from agents.models import calls, reply
from bot.api import ApiAccess
from bot.client import Client, ManyDecisions
from storage import Storage
from tests.bot.api.fixtures import AGENT_ID, TOKEN, api_harness, delete_call

DECIDE_MANY = f"/api/agents/{AGENT_ID}/decide-many"


def _step(*ids: str) -> list[object]:
    return [calls(*(delete_call(f"r-{i}", i) for i in ids)), reply("done")]


async def test_decide_many_claims_every_call_and_the_run_goes_on(store: Storage) -> None:
    async with api_harness(store, _step("a", "b", "c")) as api:
        first = await api.suspend("delete three")
        prints = {p.tool_call_id: p.fingerprint for p in first.pending}
        answer = await api.call(
            "POST",
            DECIDE_MANY,
            params={"wait": "true"},
            json={
                "runId": first.run_id,
                "decisions": [
                    {"toolCallId": "a", "decision": "approve", "fingerprint": prints["a"]},
                    {"toolCallId": "b", "decision": "decline", "reason": "keep b"},
                    {"toolCallId": "c", "decision": "approve"},
                ],
                "decidedBy": "U1",
            },
        )
        body = await answer.json()
        assert answer.status == 200, body
        assert body["toolCallIds"] == ["a", "b", "c"] and body["finishReason"] == "stop"
        assert sorted(a["id"] for a in api.executions.of("delete-record")) == ["r-a", "r-c"]
        decided = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "decided"]
        assert {(e.tool_call_id, e.source, e.actor) for e in decided} == {
            ("a", "api", "U1"),
            ("b", "api", "U1"),
            ("c", "api", "U1"),
        }


async def test_a_refusal_is_the_single_decisions_status_and_names_the_call(
    store: Storage,
) -> None:
    async with api_harness(store, _step("a", "b")) as api:
        first = await api.suspend("go")
        await api.agent.decline_tool_call(run_id=first.run_id, tool_call_id="b")
        await api.settle()
        answer = await api.call(
            "POST",
            DECIDE_MANY,
            json={
                "runId": first.run_id,
                "decisions": [
                    {"toolCallId": "a", "decision": "approve"},
                    {"toolCallId": "b", "decision": "approve"},
                ],
            },
        )
        body = await answer.json()
        assert answer.status == 409
        assert body["code"] == "APPROVAL_ALREADY_DECIDED" and body["toolCallId"] == "b"
        assert "'b'" in body["message"]
        assert [c.tool_call_id for c in await store.list_claims(first.run_id)] == ["b"]

        bad = await api.call(
            "POST",
            DECIDE_MANY,
            json={
                "runId": first.run_id,
                "decisions": [{"toolCallId": "a", "decision": "maybe"}],
            },
        )
        assert bad.status == 400
        twice = await api.call(
            "POST",
            DECIDE_MANY,
            json={
                "runId": first.run_id,
                "decisions": [
                    {"toolCallId": "a", "decision": "approve"},
                    {"toolCallId": "a", "decision": "decline"},
                ],
            },
        )
        assert twice.status == 422
        assert api.executions.of("delete-record") == []


async def test_a_per_person_token_decides_as_its_user_and_no_one_else(
    store: Storage,
) -> None:
    access = ApiAccess(people=((hashlib.sha256(b"sam-token").hexdigest(), "U_SAM"),))
    async with api_harness(store, _step("a", "b"), access=access) as api:
        first = await api.suspend("go")
        other = await api.call(
            "POST",
            DECIDE_MANY,
            token="sam-token",
            json={
                "runId": first.run_id,
                "decisions": [{"toolCallId": "a", "decision": "approve"}],
                "decidedBy": "U_EVE",
            },
        )
        assert other.status == 403
        mine = await api.call(
            "POST",
            DECIDE_MANY,
            token="sam-token",
            json={
                "runId": first.run_id,
                "decisions": [
                    {"toolCallId": "a", "decision": "approve"},
                    {"toolCallId": "b", "decision": "approve"},
                ],
            },
        )
        assert mine.status == 200
        assert {c.decided_by for c in await store.list_claims(first.run_id)} == {"U_SAM"}


async def test_the_client_mirrors_decide_many_and_raises_the_runtime_errors(
    store: Storage,
) -> None:
    async with api_harness(store, _step("a", "b", "c")) as api, Client(api.base_url, TOKEN) as cl:
        first = await api.suspend("go")
        prints = {p.tool_call_id: p.fingerprint for p in first.pending}
        with pytest.raises(FingerprintMismatch) as wrong:
            await cl.decide_many(
                AGENT_ID,
                run_id=first.run_id,
                decisions={"a": Approve(), "b": Approve()},
                fingerprints={"b": prints["a"]},
            )
        assert wrong.value.tool_call_id == "b"
        assert await store.list_claims(first.run_id) == []

        done = await cl.agent(AGENT_ID).decide_many(
            run_id=first.run_id,
            decisions={"a": Approve(), "b": Decline(reason="no"), "c": Approve()},
            decided_by="U1",
            fingerprints=prints,
            wait=True,
        )
        assert isinstance(done, ManyDecisions)
        assert done.tool_call_ids == ["a", "b", "c"] and done.finish_reason == "stop"
        with pytest.raises(AlreadyDecided) as again:
            await cl.decide_many(AGENT_ID, run_id=first.run_id, decisions={"c": Approve()})
        assert isinstance(again.value, AlreadyDecided)
        assert not isinstance(again.value, NotAllowedToDecide)
