"""SPEC 3.2–3.4: every guarantee is checked inside the claim, on every backend."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from datetime import UTC, timedelta
from typing import Any

import pytest

from agents import (
    Agent,
    AgentConfigError,
    ApprovalExpired,
    DuplicateApproval,
    InvalidToolArgs,
    NotAllowedToDecide,
    PendingToolCall,
    ServedParts,
)
from agents.models import ScriptedModel, call, reply
from storage import Storage
from tests.agents.conftest import Executions, RecordInput
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tools import Tool, ToolContext, create_tool


def _no_self_approval(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
    if kind == "approve" and decided_by is not None and decided_by == call.requested_by:
        return "self-approval: the requester cannot approve their own request"
    return None


def _agent(store: Storage, tool: Tool, *script: Any, **options: Any) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel([call(tool.id, {"id": "abc-123"}, id="c1"), *script]),
        tools=[tool],
        storage=store,
        **options,
    )


async def _pending(agent: Agent, run_id: str) -> PendingToolCall:
    page = await agent.list_suspended_runs()
    run = next(r for r in page.runs if r.run_id == run_id)
    return run.tool_calls[0]


async def test_the_requester_is_stored_with_the_pending_call_before_its_chunk(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool(require_approval=True), reply("ok"))
    stream = await agent.stream("delete", requested_by="U1")
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":
            pending = await _pending(agent, chunk.run_id)
            assert pending.requested_by == "U1"
    await stream.result()


async def test_the_requester_cannot_approve_whatever_the_timing(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = _agent(
        storage, make_tool(require_approval=True), reply("ok"), decision_policy=_no_self_approval
    )
    stream = await agent.stream("delete", requested_by="U1")
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":  # decided the instant the call is announced
            with pytest.raises(NotAllowedToDecide) as info:
                await agent.approve_tool_call(run_id=chunk.run_id, decided_by="U1")
            assert info.value.code == "APPROVAL_NOT_ALLOWED"
            assert "self-approval" in str(info.value)
    first = await stream.result()
    assert executions.calls == []
    await agent.decline_tool_call_generate(run_id=first.run_id, decided_by="U1")


async def test_an_async_policy_refusal_keeps_the_call_pending_for_someone_else(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    async def only_u9(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        return None if decided_by == "U9" else "approvers: only U9 may decide"

    agent = _agent(storage, make_tool(require_approval=True), reply("ok"), decision_policy=only_u9)
    first = await agent.generate("delete", requested_by="U1")
    with pytest.raises(NotAllowedToDecide):
        await agent.approve_tool_call(run_id=first.run_id, decided_by="U2")
    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U9")
    assert done.finish_reason == "stop"
    assert executions.of("delete-record") == [{"id": "abc-123"}]


async def test_a_decision_after_expires_at_raises_approval_expired_without_any_sweep(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = _agent(storage, make_tool(require_approval=True), reply("ok"))
    first = await agent.generate("delete", approval_ttl_seconds=0)
    pending = await _pending(agent, first.run_id)
    assert pending.expires_at is not None and pending.expires_at.tzinfo is not None
    with pytest.raises(ApprovalExpired):
        await agent.approve_tool_call(run_id=first.run_id, decided_by="U2")
    assert executions.calls == []


async def test_expires_at_is_the_ttl_after_the_request(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(
        storage,
        make_tool(require_approval=True),
        default_options={"approval_ttl_seconds": 3600},
    )
    first = await agent.generate("delete")
    pending = await _pending(agent, first.run_id)
    assert pending.suspended_at is not None and pending.expires_at is not None
    assert pending.expires_at - pending.suspended_at == timedelta(seconds=3600)
    assert pending.expires_at.utcoffset() == UTC.utcoffset(None)


def _quorum_tool(executions: Executions, approvals: int = 2) -> Tool:
    async def execute(input: RecordInput, ctx: ToolContext) -> dict[str, str]:
        executions.calls.append(("drop-table", input.model_dump()))
        return {"dropped": input.id}

    return create_tool(
        id="drop-table",
        description="Drop a table",
        input_schema=RecordInput,
        execute=execute,
        require_approval=True,
        approvals=approvals,
    )


async def test_a_quorum_call_runs_once_after_the_nth_distinct_approver(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    agent = _agent(storage, _quorum_tool(executions), reply("Dropped."))
    first = await agent.generate("drop")
    pending = await _pending(agent, first.run_id)
    assert pending.approvals_required == 2 and pending.approved_by == []
    partial = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="A")
    assert partial.finish_reason == "suspended"
    assert partial.pending[0].approved_by == ["A"]
    assert executions.calls == []
    with pytest.raises(DuplicateApproval) as info:
        await agent.approve_tool_call(run_id=first.run_id, decided_by="A")
    assert info.value.code == "APPROVAL_DUPLICATE_APPROVER"
    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="B")
    assert done.finish_reason == "stop"
    assert executions.of("drop-table") == [{"id": "abc-123"}]


async def test_simultaneous_approvers_of_a_quorum_call_run_it_exactly_once(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    agent = _agent(storage, _quorum_tool(executions, approvals=3), reply("Dropped."))
    first = await agent.generate("drop")
    outcomes = await asyncio.gather(
        *(agent.approve_tool_call(run_id=first.run_id, decided_by=f"U{n}") for n in range(8)),
        return_exceptions=True,
    )
    for outcome in outcomes:
        if not isinstance(outcome, BaseException):
            await outcome.result()
    await agent.drain()
    assert executions.of("drop-table") == [{"id": "abc-123"}]


async def test_a_quorum_call_needs_decided_by_and_any_decline_declines(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    agent = _agent(storage, _quorum_tool(executions), reply("Not dropped."))
    first = await agent.generate("drop")
    with pytest.raises(AgentConfigError):
        await agent.approve_tool_call(run_id=first.run_id)
    await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="A")
    done = await agent.decline_tool_call_generate(run_id=first.run_id, decided_by="B")
    assert done.finish_reason == "stop" and executions.calls == []


async def test_a_sub_agents_own_approval_option_applies_under_a_supervisor(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    billing = Agent(
        id="billing",
        model=ScriptedModel([call("delete-record", {"id": "abc-123"}, id="i1"), reply("done")]),
        tools=[make_tool(require_approval=False)],
        default_options={"require_tool_approval": True},
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "delete"}, id="o1"), reply("ok")]),
        agents={"billing": billing},
        storage=storage,
    )
    result = await ops.generate("delete", require_tool_approval=False)
    assert result.finish_reason == "suspended"
    assert result.pending[0].tool_name == "delete-record"
    assert executions.calls == []


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, -math.inf, "\ud800 lone surrogate", {1: math.nan, "a": 1}],
    ids=["nan", "inf", "-inf", "surrogate", "nan-under-keys-that-cannot-be-sorted"],
)
async def test_arguments_that_are_not_strict_json_are_refused_and_nothing_is_listed(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
    bad: Any,
) -> None:
    tool = make_tool("note", input_schema=_AnyInput, require_approval=True)
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("note", {"value": bad}, id="c1")]),
        tools=[tool],
        storage=storage,
    )
    stream = await agent.stream("note it")
    result = await stream.result()
    assert result.finish_reason == "error" and isinstance(result.error, InvalidToolArgs)
    assert result.pending == []
    assert (await agent.list_suspended_runs()).total == 0
    assert executions.calls == []


async def test_a_run_whose_model_failed_is_not_listed_as_suspended(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = Agent(id="ops", model=ScriptedModel([]), tools=[make_tool()], storage=storage)
    stream = await agent.stream("hello", thread_id="t1")
    assert (await stream.result()).finish_reason == "error"
    assert (await agent.list_suspended_runs()).total == 0
    assert (await agent.list_suspended_runs(thread_id="t1")).runs == []


from pydantic import BaseModel  # noqa: E402


class _AnyInput(BaseModel):
    value: Any


async def test_a_hosts_rules_apply_to_sub_agents_and_never_replace_the_agents_own(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    def only_u9(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        return None if decided_by == "U9" else "not-approver: only U9"

    billing = Agent(
        id="billing",
        model=ScriptedModel([call("delete-record", {"id": "abc-123"}, id="i1"), reply("done")]),
        tools=[make_tool(require_approval=True)],
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "delete"}, id="o1"), reply("ok")]),
        agents={"billing": billing},
        storage=storage,
    )
    ops = ops.served(ServedParts(decision_policy=only_u9, approval_ttl_seconds=60))
    assert ops.decision_policy is only_u9
    first = await ops.generate("delete", requested_by="U1")
    assert first.pending[0].expires_at is not None
    with pytest.raises(NotAllowedToDecide):
        await ops.approve_tool_call(run_id=first.run_id, decided_by="U2")
    own = Agent(id="x", model=ScriptedModel([]), storage=storage, decision_policy=_no_self_approval)
    assert own.served(ServedParts(decision_policy=only_u9)).decision_policy is _no_self_approval
