"""``Agent.decide``: one entry point for every Decision value, refusals raised before returning."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from agents import (
    Agent,
    AlreadyDecided,
    ApprovalExpired,
    Approve,
    Decision,
    DecisionRequest,
    Decline,
    Expire,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    Resume,
    Runner,
    SnapshotNotFound,
    ToolCallNotSuspended,
    fingerprint,
)
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tests.agents.test_suspend_resume import Ticketing
from tools import Tool


def _gated(store: InMemoryStorage, make_tool: Callable[..., Tool], *script: Any) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel([call("delete-record", {"id": "abc-123"}, id="c1"), *script]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )


def test_decisions_are_frozen_keyword_only_values_tagged_by_kind() -> None:
    values: list[Decision] = [Approve(), Decline(reason="no"), Resume(data={"a": 1}), Expire()]
    assert [d.kind for d in values] == ["approve", "decline", "resume", "expire"]
    assert Approve().args is None and Decline().reason is None
    with pytest.raises(TypeError):
        Approve({"id": "x"})  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Decline().reason = "later"  # type: ignore[misc]


async def test_decide_approve_with_edited_args_runs_them_and_records_the_edit(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated(store, make_tool, reply("Deleted."))
    first = await agent.generate("delete")
    stream = await agent.decide(
        Approve(args={"id": "abc-999"}), run_id=first.run_id, decided_by="U1", source="api"
    )
    assert (await stream.result()).text == "Deleted."
    assert executions.of("delete-record") == [{"id": "abc-999"}]
    (claim,) = await store.list_claims(first.run_id)
    assert (claim.decision, claim.decided_by) == ("approved", "U1")
    assert claim.detail["edited"] is True and claim.detail["args"] == {"id": "abc-999"}
    (decided,) = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "decided"]
    assert (decided.source, decided.data["original_args"]) == ("api", {"id": "abc-123"})


async def test_decide_decline_never_runs_the_tool_and_tells_the_model_why(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel([call("delete-record", {"id": "abc-123"}, id="c1"), reply("Kept it.")])
    agent = Agent(id="ops", model=model, tools=[make_tool(require_approval=True)], storage=store)
    first = await agent.generate("delete")
    done = await (await agent.decide(Decline(reason="prod"), run_id=first.run_id)).result()
    assert done.text == "Kept it." and executions.calls == []
    told = json.loads(model.requests[-1].messages[-1].content or "")
    assert (told["status"], told["reason"]) == ("declined", "prod")
    assert [c.decision for c in await store.list_claims(first.run_id)] == ["declined"]


async def test_decide_resume_validates_the_data_before_claiming(store: InMemoryStorage) -> None:
    ticketing = Ticketing()
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("open-ticket", {"title": "printer"}, id="t1"), reply("Open.")]),
        tools=[ticketing.tool()],
        storage=store,
    )
    first = await agent.generate("ticket")
    with pytest.raises(InvalidResumeData):
        await agent.decide(Resume(data={"priority": "urgent"}), run_id=first.run_id)
    assert await store.list_claims(first.run_id) == []
    with pytest.raises(ToolCallNotSuspended):  # a suspension is resumed, not approved
        await agent.decide(Approve(), run_id=first.run_id)
    done = await (
        await agent.decide(Resume(data={"priority": "high"}), run_id=first.run_id)
    ).result()
    assert done.text == "Open."
    assert ticketing.opened == [{"title": "printer", "priority": "high"}]
    assert [c.decision for c in await store.list_claims(first.run_id)] == ["resumed"]


async def test_decide_expire_claims_expired_and_the_model_hears_expired_not_declined(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel([call("delete-record", {"id": "abc-123"}, id="c1"), reply("Too late.")])
    agent = Agent(id="ops", model=model, tools=[make_tool(require_approval=True)], storage=store)
    first = await agent.generate("delete")
    stream = await agent.decide(Expire(), run_id=first.run_id)  # default source: "python"
    chunks = [c async for c in stream.full_stream]
    assert executions.calls == []
    denied = next(c for c in chunks if c.type == "tool-output-denied")
    assert denied.reason == "expired"
    told = json.loads(model.requests[-1].messages[-1].content or "")
    assert told["status"] == "expired"  # SPEC 12 round 4: nobody declined it
    assert "declined" not in json.dumps(told) and "NOT executed" in told["message"]
    (claim,) = await store.list_claims(first.run_id)
    assert (claim.decision, claim.detail["source"]) == ("expired", "python")
    with pytest.raises(ApprovalExpired):
        await agent.approve_tool_call(run_id=first.run_id)


async def test_a_decline_from_the_expiry_source_is_still_a_decline(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    agent = _gated(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    await (await agent.decline_tool_call(run_id=first.run_id, source="expiry")).result()
    (claim,) = await store.list_claims(first.run_id)
    assert (claim.decision, claim.detail["source"]) == ("declined", "expiry")
    with pytest.raises(AlreadyDecided) as info:
        await agent.decide(Approve(), run_id=first.run_id)
    assert not isinstance(info.value, ApprovalExpired)


async def test_decide_raises_every_refusal_before_returning_and_claims_nothing(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    with pytest.raises(SnapshotNotFound):
        await agent.decide(Approve(), run_id="never-seen")
    with pytest.raises(ToolCallNotSuspended):
        await agent.decide(Decline(), run_id=first.run_id, tool_call_id="nope")
    with pytest.raises(FingerprintMismatch):
        await agent.decide(Approve(), run_id=first.run_id, fingerprint="0" * 64)
    with pytest.raises(InvalidToolArgs):
        await agent.decide(Approve(args={"id": 7}), run_id=first.run_id)
    assert await store.list_claims(first.run_id) == []
    good = fingerprint("delete-record", {"id": "abc-123"})
    await (await agent.decide(Approve(), run_id=first.run_id, fingerprint=good)).result()
    with pytest.raises(AlreadyDecided):
        await agent.decide(Decline(), run_id=first.run_id)
    assert executions.of("delete-record") == [{"id": "abc-123"}]


def _three_levels(store: InMemoryStorage, make_tool: Callable[..., Tool], **kw: Any) -> Agent:
    leaf_model = ScriptedModel([call("delete-record", {"id": "abc-123"}, id="l1"), reply("leaf")])
    leaf = Agent(id="leaf", model=leaf_model, tools=[make_tool(require_approval=True)])
    mid = Agent(
        id="mid",
        model=ScriptedModel([call("agent-leaf", {"prompt": "delete"}, id="m1"), reply("mid")]),
        agents={"leaf": leaf},
    )
    return Agent(
        id="top",
        model=ScriptedModel([call("agent-mid", {"prompt": "delete"}, id="t1"), reply("top")]),
        agents={"mid": mid},
        storage=store,
        **kw,
    )


async def test_a_decision_travels_down_two_levels_as_the_same_value(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    top = _three_levels(store, make_tool)
    first = await top.generate("delete")
    assert first.pending[0].agent_path == ["top", "mid", "leaf"]
    done = await (
        await top.decide(
            Approve(args={"id": "abc-777"}), run_id=first.run_id, decided_by="U1", source="api"
        )
    ).result()
    assert done.text == "top"
    assert executions.of("delete-record") == [{"id": "abc-777"}]
    decided = [e for e in await store.query_audit() if e.kind == "decided"]
    assert sorted(
        (e.agent_id, e.actor, e.source, e.data["decision"], e.data["args"]) for e in decided
    ) == [
        ("leaf", "U1", "api", "approved", {"id": "abc-777"}),
        ("mid", "U1", "api", "approved", {"id": "abc-777"}),
        ("top", "U1", "api", "approved", {"id": "abc-777"}),
    ]


async def test_expire_travels_down_two_levels_and_every_level_records_expired(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    top = _three_levels(store, make_tool)
    first = await top.generate("delete")
    await (await top.decide(Expire(), run_id=first.run_id, source="sweep")).result()
    assert executions.calls == []
    decided = [e for e in await store.query_audit() if e.kind == "decided"]
    assert sorted((e.agent_id, e.data["decision"], e.data["reason"]) for e in decided) == [
        ("leaf", "expired", "expired"),
        ("mid", "expired", "expired"),
        ("top", "expired", "expired"),
    ]
    with pytest.raises(ApprovalExpired):
        await top.decide(Approve(), run_id=first.run_id)


async def test_a_runner_with_one_slot_runs_a_supervisor_and_its_sub_agent(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    runner = Runner(max_concurrency=1)
    top = _three_levels(store, make_tool, runner=runner)
    assert top.agents["mid"].runner is runner and top.agents["mid"].agents["leaf"].runner is runner
    async with asyncio.timeout(10):
        first = await top.generate("delete")
        assert first.finish_reason == "suspended"
        done = await top.approve_tool_call_generate(run_id=first.run_id, decided_by="U1")
    assert done.text == "top"
    assert executions.of("delete-record") == [{"id": "abc-123"}]
    await top.drain()
    assert runner.pending == 0


def test_a_decision_request_is_the_one_value_of_the_call_and_its_decider() -> None:
    names = [f.name for f in dataclasses.fields(DecisionRequest)]
    assert names == [
        "run_id",
        "tool_call_id",
        "fingerprint",
        "decided_by",
        "definition_digest",
        "source",
    ]
    request = DecisionRequest(run_id="r1", tool_call_id="c1", decided_by="U1", source="button")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.run_id = "r2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        DecisionRequest("r1")  # type: ignore[misc]  # keyword-only


async def test_decide_request_binds_the_fingerprint_and_records_who_and_how(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated(store, make_tool, reply("Deleted."))
    first = await agent.generate("delete")
    shown = DecisionRequest(
        run_id=first.run_id,
        tool_call_id="c1",
        fingerprint="0" * 64,
        decided_by="U1",
        source="modal",
    )
    with pytest.raises(FingerprintMismatch):
        await agent.decide_request(shown, Approve())
    assert executions.of("delete-record") == []
    exact = dataclasses.replace(shown, fingerprint=fingerprint("delete-record", {"id": "abc-123"}))
    assert (await (await agent.decide_request(exact, Approve())).result()).text == "Deleted."
    (decided,) = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "decided"]
    assert (decided.actor, decided.source) == ("U1", "modal")
