"""Standing grants in the runtime (SPEC 15): created with an approval in the same claim,
refused where the rule allows none, used atomically for later matching calls (never the
requester's own, never past max_uses, never after revocation), listed and revoked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import (
    Agent,
    Approve,
    CallRules,
    GrantLimits,
    GrantNotAllowed,
    GrantRequest,
    ServedParts,
    ToolCallGrantedChunk,
)
from agents.models import ModelRequest, ScriptedModel, call, reply
from agents.running._chunks import Chunk
from storage import InMemoryStorage, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tools import Tool, ToolContext, create_tool


class DeployInput(BaseModel):
    service: str
    version: str


class Deploys:
    def __init__(self) -> None:
        self.done: list[dict[str, Any]] = []

    def tool(self, *, grants: bool = True) -> Tool:
        async def deploy(input: DeployInput, ctx: ToolContext) -> dict[str, Any]:
            self.done.append(input.model_dump())
            return {"deployed": input.model_dump()}

        return create_tool(
            id="deploy",
            description="Deploy a service",
            input_schema=DeployInput,
            execute=deploy,
            require_approval=True,
            grants=grants,
        )


def _script(*versions: str, service: str = "api") -> ScriptedModel:
    items: list[Any] = []
    for n, version in enumerate(versions):
        items += [
            call("deploy", {"service": service, "version": version}, id=f"d{n}"),
            reply(f"deployed {n}"),
        ]
    return ScriptedModel(items)


def _either(request: ModelRequest) -> Any:
    """Order-free script item for concurrent runs: call the tool, then answer its result."""
    if request.messages[-1].role == "tool":
        return reply("deployed")
    return call("deploy", {"service": "api", "version": "1"})


def _agent(
    deploys: Deploys,
    model: ScriptedModel,
    store: Storage | None = None,
    *,
    grants: bool = True,
    rules: CallRules | None = None,
    policy: Any = None,
) -> Agent:
    agent = Agent(
        id="ops",
        model=model,
        tools=[deploys.tool(grants=grants)],
        storage=store or InMemoryStorage(),
        decision_policy=policy,
    )
    if rules is not None:
        agent = agent.served(ServedParts(call_rules=lambda name, tool_id, path, args: rules))
    return agent


async def _chunks(agent: Agent, **options: Any) -> list[Chunk]:
    stream = await agent.stream("deploy", **options)
    return [chunk async for chunk in stream.full_stream]


async def _granted_first(agent: Agent, **grant: Any) -> str:
    """Run one call in thread T1, approve it by U1 with a grant; return the grant id."""
    first = await agent.generate("deploy", thread_id="T1", resource_id="C1", requested_by="U9")
    assert first.finish_reason == "suspended" and first.pending[0].grantable
    request = GrantRequest(**{"seconds": 3600, "max_uses": 2, **grant})
    stream = await agent.decide(Approve(grant=request), run_id=first.run_id, decided_by="U1")
    assert (await stream.result()).finish_reason == "stop"
    [made] = await agent.list_grants(thread_id="T1")
    return made.grant_id


async def test_a_grant_approves_later_matching_calls_until_its_uses_run_out() -> None:
    deploys = Deploys()
    agent = _agent(deploys, _script("1", "2", "3", "4"))
    grant_id = await _granted_first(agent, free_args=("version",))

    [made] = await agent.list_grants(thread_id="T1", resource_id="C1", granted_by="U1")
    assert made.pins == {"service": "api"} and made.free_args == ["version"]
    assert (made.uses, made.max_uses, made.granted_by) == (0, 2, "U1")
    second = await _chunks(agent, thread_id="T1", resource_id="C1", requested_by="U9")
    third = await _chunks(agent, thread_id="T1", resource_id="C1", requested_by="U9")
    fourth = await _chunks(agent, thread_id="T1", resource_id="C1", requested_by="U9")

    for chunks, uses in ((second, 1), (third, 2)):
        types = [c.type for c in chunks]
        assert "tool-call-approval" not in types
        assert types.index("tool-call-granted") < types.index("tool-result")
        [granted] = [c for c in chunks if isinstance(c, ToolCallGrantedChunk)]
        assert granted.payload["grant_id"] == grant_id
        assert (granted.granted_by, granted.uses, granted.max_uses) == ("U1", uses, 2)
        assert granted.expires_at == made.expires_at
        assert chunks[-1].payload["finish_reason"] == "stop"
    assert "tool-call-granted" not in [c.type for c in fourth]
    assert "tool-call-approval" in [c.type for c in fourth]
    assert [d["version"] for d in deploys.done] == ["1", "2", "3"]
    assert await agent.list_grants(thread_id="T1") == []  # used up: no longer active
    [spent] = await agent.list_grants(thread_id="T1", active_only=False)
    assert spent.uses == 2


async def test_a_granted_call_is_the_grantors_decision_audited_with_the_grant() -> None:
    deploys, store = Deploys(), InMemoryStorage()
    agent = _agent(deploys, _script("1", "1"), store)
    grant_id = await _granted_first(agent)

    result = await agent.generate("deploy", thread_id="T1", resource_id="C1", requested_by="U9")

    assert result.text == "deployed 1"
    [claim] = await store.list_claims(result.run_id)
    assert (claim.decision, claim.decided_by) == ("approved", "U1")
    assert claim.detail == {"source": "grant", "grant_id": grant_id}
    decided = [e for e in await store.query_audit(run_id=result.run_id) if e.kind == "decided"]
    assert [(e.actor, e.source, e.data["grant_id"]) for e in decided] == [("U1", "grant", grant_id)]
    created = next(e for e in await store.query_audit() if e.kind == "decided")
    assert created.data["grant_id"] == grant_id  # the approval that created it says so too


async def test_a_pinned_argument_that_differs_pends_as_usual() -> None:
    deploys = Deploys()
    model = ScriptedModel(
        [
            call("deploy", {"service": "api", "version": "1"}, id="d0"),
            reply("ok"),
            call("deploy", {"service": "db", "version": "1"}, id="d1"),
            call("deploy", {"service": "api", "version": "2"}, id="d2"),
        ]
    )
    agent = _agent(deploys, model)
    await _granted_first(agent)  # everything pinned

    other_service = await agent.generate("x", thread_id="T1", resource_id="C1")
    assert other_service.finish_reason == "suspended"
    other_version = await agent.generate("x", thread_id="T1", resource_id="C1")
    assert other_version.finish_reason == "suspended"
    assert len(deploys.done) == 1


async def test_a_thread_grant_stays_in_its_thread_and_a_resource_grant_spans_the_channel() -> None:
    deploys = Deploys()
    agent = _agent(deploys, _script("1", "1", "1", "1"))
    await _granted_first(agent)

    elsewhere = await agent.generate("x", thread_id="T2", resource_id="C1", requested_by="U9")
    assert elsewhere.finish_reason == "suspended"
    stream = await agent.decide(
        Approve(grant=GrantRequest(seconds=60, max_uses=5, within="resource")),
        run_id=elsewhere.run_id,
        decided_by="U1",
    )
    await stream.result()
    third_thread = await agent.generate("x", thread_id="T3", resource_id="C1", requested_by="U9")
    other_channel = await agent.generate("x", thread_id="T4", resource_id="C2", requested_by="U9")

    assert third_thread.finish_reason == "stop"
    assert other_channel.finish_reason == "suspended"
    assert len(deploys.done) == 3


async def test_the_requesters_own_call_is_never_approved_by_their_grant() -> None:
    deploys = Deploys()
    agent = _agent(deploys, _script("1", "1"))
    await _granted_first(agent)

    mine = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U1")

    assert mine.finish_reason == "suspended" and len(deploys.done) == 1


async def test_a_grantor_the_policy_no_longer_allows_approves_nothing() -> None:
    deploys = Deploys()
    allowed = {"U1"}

    def policy(call: Any, decided_by: str | None, kind: str) -> str | None:
        return None if decided_by in allowed else "not an approver"

    agent = _agent(deploys, _script("1", "1"), policy=policy)
    await _granted_first(agent)
    allowed.clear()

    later = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")

    assert later.finish_reason == "suspended" and len(deploys.done) == 1


async def test_a_revoked_grant_approves_nothing_and_only_grantor_or_approver_revokes() -> None:
    deploys = Deploys()

    def policy(call: Any, decided_by: str | None, kind: str) -> str | None:
        return None if decided_by in ("U1", "U2") else "not an approver"

    agent = _agent(deploys, _script("1", "1"), policy=policy)
    grant_id = await _granted_first(agent)

    with pytest.raises(GrantNotAllowed):
        await agent.revoke_grant(grant_id, revoked_by="U7")
    revoked = await agent.revoke_grant(grant_id, revoked_by="U2")  # an approver of the rule
    later = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")

    assert revoked.revoked_by == "U2" and revoked.revoked_at is not None
    assert later.finish_reason == "suspended" and len(deploys.done) == 1
    assert await agent.list_grants() == []
    with pytest.raises(GrantNotAllowed):
        await agent.revoke_grant("no-such-grant", revoked_by="U1")


async def _refused(agent: Agent, decision: Approve, **options: Any) -> GrantNotAllowed:
    first = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")
    with pytest.raises(GrantNotAllowed) as refused:
        await agent.decide(decision, run_id=first.run_id, decided_by="U1")
    assert await agent.list_grants(active_only=False) == []
    call = await agent.pending_call(run_id=first.run_id, tool_call_id=first.pending[0].tool_call_id)
    assert call is not None, "the call is no longer pending"
    await agent.decide(Approve(), run_id=first.run_id, decided_by="U1")  # still decidable
    return refused.value


async def test_a_rule_without_grants_refuses_one_and_records_nothing() -> None:
    agent = _agent(Deploys(), _script("1"), rules=CallRules(require_approval=True))

    refused = await _refused(agent, Approve(grant=GrantRequest(seconds=60, max_uses=1)))

    assert refused.code == "GRANT_NOT_ALLOWED" and "allows no standing grant" in str(refused)


async def test_a_tool_without_grants_and_no_rule_refuses_one() -> None:
    agent = _agent(Deploys(), _script("1"), grants=False)

    first = await agent.generate("x", thread_id="T1", resource_id="C1")
    assert first.pending[0].grantable is False
    with pytest.raises(GrantNotAllowed):
        await agent.decide(Approve(grant=GrantRequest(seconds=60, max_uses=1)), run_id=first.run_id)


@pytest.mark.parametrize(
    "request_",
    [GrantRequest(seconds=3601, max_uses=1), GrantRequest(seconds=60, max_uses=21)],
    ids=["too-long", "too-many-uses"],
)
async def test_a_grant_beyond_the_rules_bounds_is_refused(request_: GrantRequest) -> None:
    limits = GrantLimits(max_seconds=3600, max_uses=20)
    agent = _agent(Deploys(), _script("1"), rules=CallRules(require_approval=True, grants=limits))

    await _refused(agent, Approve(grant=request_))


async def test_the_approval_chunk_says_the_call_is_grantable_within_the_rules_bounds() -> None:
    limits = GrantLimits(max_seconds=3600, max_uses=20)
    agent = _agent(Deploys(), _script("1"), rules=CallRules(require_approval=True, grants=limits))

    chunks = await _chunks(agent, thread_id="T1")

    [approval] = [c for c in chunks if c.type == "tool-call-approval"]
    assert approval.payload["grantable"] is True
    assert (approval.payload["grant_max_seconds"], approval.payload["grant_max_uses"]) == (
        3600,
        20,
    )
    call = approval.pending_call()
    assert (call.grantable, call.grant_max_uses) == (True, 20)


@pytest.mark.parametrize(
    "rules",
    [
        CallRules(require_approval=True, approvals=2, grants=GrantLimits()),
        CallRules(require_approval=True, confirm=True, grants=GrantLimits()),
    ],
    ids=["quorum", "confirm"],
)
async def test_quorum_and_confirm_rules_allow_no_grant(rules: CallRules) -> None:
    agent = _agent(Deploys(), _script("1"), rules=rules)

    first = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")

    assert first.pending[0].grantable is False
    with pytest.raises(GrantNotAllowed):
        await agent.decide(
            Approve(grant=GrantRequest(seconds=60, max_uses=1)),
            run_id=first.run_id,
            decided_by="U1",
        )


async def test_an_edited_approval_creates_no_grant() -> None:
    agent = _agent(Deploys(), _script("1"))

    await _refused(
        agent,
        Approve(
            args={"service": "api", "version": "9"},
            grant=GrantRequest(seconds=60, max_uses=1),
        ),
    )


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_instances_racing_for_the_last_uses_run_exactly_max_uses(
    backend: str, tmp_path: Path
) -> None:
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as one,
        open_storage(url) as two,
    ):
        deploys = Deploys()
        first = _agent(deploys, ScriptedModel([_either] * 20), one)
        second = _agent(deploys, ScriptedModel([_either] * 20), two)
        await _granted_first(first, max_uses=3)

        async def run(agent: Agent) -> str:
            result = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")
            return result.finish_reason

        reasons = await asyncio.gather(*(run((first, second)[n % 2]) for n in range(6)))

        assert sorted(reasons) == ["stop"] * 3 + ["suspended"] * 3
        assert len(deploys.done) == 1 + 3
        [spent] = await second.list_grants(active_only=False)
        assert spent.uses == 3


async def test_a_rule_that_now_needs_a_quorum_or_a_confirm_is_not_approved_by_a_grant() -> None:
    deploys = Deploys()
    rules = {"now": CallRules(require_approval=True, grants=GrantLimits(max_uses=5))}
    agent = Agent(
        id="ops",
        model=ScriptedModel([_either] * 10),
        tools=[deploys.tool(grants=False)],
        storage=InMemoryStorage(),
    ).served(ServedParts(call_rules=lambda name, tool_id, path, args: rules["now"]))
    await _granted_first(agent)

    rules["now"] = CallRules(require_approval=True, approvals=2, grants=GrantLimits(max_uses=5))
    quorum = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")
    rules["now"] = CallRules(require_approval=True, confirm=True, grants=GrantLimits(max_uses=5))
    confirm = await agent.generate("x", thread_id="T1", resource_id="C1", requested_by="U9")

    assert (quorum.finish_reason, confirm.finish_reason) == ("suspended", "suspended")
    assert len(deploys.done) == 1
    [unused] = await agent.list_grants()
    assert unused.uses == 0
