"""SPEC 3.3 "An approval binds what runs": the tool's definition is pinned, edited arguments
are a new proposal gated under the rules that match THEM, authority is checked again when a
quorum completes, and the requester may withdraw their own call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from agents import (
    Agent,
    AlreadyDecided,
    Approve,
    CallRules,
    DecisionRequest,
    Decline,
    FingerprintMismatch,
    InvalidToolArgs,
    NotAllowedToDecide,
    PendingToolCall,
    ServedParts,
    ToolCallApprovalChunk,
    ToolChanged,
)
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage, Storage
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tools import Tool, ToolContext, create_tool


class RefundInput(BaseModel):
    order: int
    amount: float


class Refunds:
    """A refund tool that records every real execution."""

    def __init__(self, description: str = "Issue a refund") -> None:
        self.done: list[dict[str, Any]] = []
        self.description = description

    def tool(self, description: str | None = None) -> Tool:
        async def refund(input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
            self.done.append(input.model_dump())
            return {"refunded": input.amount}

        return create_tool(
            id="refund",
            description=description or self.description,
            input_schema=RefundInput,
            execute=refund,
            require_approval=True,
        )


def demo_rules(
    tool_name: str, tool_id: str, path: tuple[str, ...], args: dict[str, Any]
) -> CallRules | None:
    """The demo's rule: refunds over 1,000 need two approvers and a confirm."""
    if tool_name == "refund" and float(args.get("amount", 0)) > 1000:
        return CallRules(require_approval=True, approvals=2, confirm=True)
    return None


class Approvers:
    """A decision policy: no self-approval; refunds over 1,000 only by ``big``; everything
    else by ``anyone`` (empty: anybody)."""

    def __init__(self, *, big: set[str], anyone: set[str] | None = None) -> None:
        self.big = big
        self.anyone = anyone

    def __call__(self, call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        if kind != "approve":
            return None
        if decided_by == call.requested_by:
            return "no self-approval"
        if float(call.args.get("amount", 0)) > 1000:
            return None if decided_by in self.big else "only big approvers"
        if self.anyone is not None and decided_by not in self.anyone:
            return "not an approver"
        return None


def _agent(
    store: Storage,
    refunds: Refunds,
    policy: Any = None,
    amount: float = 300,
    rules: Any = demo_rules,
) -> Agent:
    agent = Agent(
        id="ops",
        model=ScriptedModel(
            [call("refund", {"order": 49, "amount": amount}, id="c1"), reply("Refunded.")]
        ),
        tools=[refunds.tool()],
        storage=store,
        decision_policy=policy or Approvers(big={"sam", "uc"}),
    )
    return agent.served(ServedParts(call_rules=rules))


async def _asked(agent: Agent) -> ToolCallApprovalChunk:
    stream = await agent.stream("refund order 49", requested_by="alex")
    chunks = [c async for c in stream.full_stream]
    return next(c for c in chunks if isinstance(c, ToolCallApprovalChunk))


# -- B: edited arguments are a new proposal ----------------------------------------------------


async def test_an_edit_over_the_two_person_threshold_runs_nothing_and_is_presented_again(
    storage: Storage,  # noqa: F811
) -> None:
    refunds = Refunds()
    agent = _agent(storage, refunds)
    shown = await _asked(agent)

    stream = await agent.approve_tool_call(
        run_id=shown.run_id, args={"order": 49, "amount": 1150}, decided_by="sam"
    )
    chunks = [c async for c in stream.full_stream]
    result = await stream.result()

    assert refunds.done == []
    assert result.finish_reason == "suspended"
    [again] = [c for c in chunks if isinstance(c, ToolCallApprovalChunk)]
    assert again.tool_call_id == "c1" and again.args == {"order": 49, "amount": 1150}
    assert again.fingerprint != shown.fingerprint
    assert again.edited_from == {"order": 49, "amount": 300}
    assert (again.approvals_required, again.approved_by) == (2, ["sam"])
    pending = await agent.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending is not None and pending.approved_by == ["sam"]
    assert pending.edited_from == {"order": 49, "amount": 300}
    audit = await storage.query_audit(run_id=shown.run_id)
    assert any(e.kind == "decided" and e.data.get("decision") == "edited" for e in audit)
    [replaced] = [c for c in await storage.list_claims(shown.run_id) if c.decision == "edited"]
    assert replaced.status == "completed"  # nothing of the shown round runs: nothing to recover
    assert replaced.decided_by == "sam"

    with pytest.raises(FingerprintMismatch):  # the old card's fingerprint
        await agent.approve_tool_call(
            run_id=shown.run_id, fingerprint=shown.fingerprint, decided_by="uc"
        )
    done = await agent.approve_tool_call_generate(
        run_id=shown.run_id, fingerprint=again.fingerprint, decided_by="uc"
    )
    assert done.text == "Refunded."
    assert refunds.done == [{"order": 49, "amount": 1150}]


async def test_an_edit_whose_rule_excludes_the_editor_does_not_count_the_editor() -> None:
    refunds = Refunds()
    agent = _agent(InMemoryStorage(), refunds, policy=Approvers(big={"uc", "ud"}))
    shown = await _asked(agent)

    result = await agent.approve_tool_call_generate(
        run_id=shown.run_id, args={"order": 49, "amount": 5000}, decided_by="sam"
    )

    assert result.finish_reason == "suspended" and refunds.done == []
    pending = await agent.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending is not None and pending.approved_by == [] and pending.approvals_required == 2
    with pytest.raises(NotAllowedToDecide):
        await agent.approve_tool_call(run_id=shown.run_id, decided_by="sam")
    await (await agent.approve_tool_call(run_id=shown.run_id, decided_by="uc")).result()
    assert refunds.done == []
    done = await agent.approve_tool_call_generate(run_id=shown.run_id, decided_by="ud")
    assert done.text == "Refunded." and refunds.done == [{"order": 49, "amount": 5000}]


async def test_an_edit_that_needs_nothing_more_runs_at_once() -> None:
    refunds = Refunds()
    agent = _agent(InMemoryStorage(), refunds)
    shown = await _asked(agent)

    done = await agent.approve_tool_call_generate(
        run_id=shown.run_id, args={"order": 49, "amount": 250}, decided_by="sam"
    )

    assert done.text == "Refunded." and refunds.done == [{"order": 49, "amount": 250}]


async def test_an_edit_of_a_two_person_call_still_needs_a_second_person() -> None:
    refunds = Refunds()
    agent = _agent(InMemoryStorage(), refunds, amount=2000)
    shown = await _asked(agent)
    assert shown.approvals_required == 2

    result = await agent.approve_tool_call_generate(
        run_id=shown.run_id, args={"order": 49, "amount": 900}, decided_by="sam"
    )

    assert result.finish_reason == "suspended" and refunds.done == []
    pending = await agent.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending is not None and (pending.approvals_required, pending.approved_by) == (2, ["sam"])


# -- C: authority at decision time -------------------------------------------------------------


def _two(*_: Any) -> CallRules:
    return CallRules(approvals=2)


async def test_an_approval_whose_author_was_dropped_no_longer_counts(
    storage: Storage,  # noqa: F811
) -> None:
    refunds = Refunds()
    before = _agent(
        storage, refunds, policy=Approvers(big=set(), anyone={"ua", "ub", "uc"}), rules=_two
    )
    shown = await _asked(before)
    assert shown.approvals_required == 2
    await (await before.approve_tool_call(run_id=shown.run_id, decided_by="ua")).result()

    # a restart with another policy: UA is no approver any more
    after = _agent(storage, refunds, policy=Approvers(big=set(), anyone={"ub", "uc"}), rules=_two)
    waiting = await after.approve_tool_call_generate(run_id=shown.run_id, decided_by="ub")

    assert waiting.finish_reason == "suspended" and refunds.done == []
    pending = await after.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending is not None and pending.approved_by == ["ub"]
    await after.approve_tool_call_generate(run_id=shown.run_id, decided_by="uc")
    assert refunds.done == [{"order": 49, "amount": 300}]


# -- D: withdrawal -----------------------------------------------------------------------------


async def test_the_requester_withdraws_their_call_and_the_model_is_told(
    storage: Storage,  # noqa: F811
) -> None:
    refunds = Refunds()
    agent = _agent(storage, refunds, policy=Approvers(big=set(), anyone={"sam"}))
    shown = await _asked(agent)

    with pytest.raises(NotAllowedToDecide) as refused:
        await agent.decide(Decline(withdrawn=True), run_id=shown.run_id, decided_by="sam")
    assert refused.value.rule == "not-requester"
    stream = await agent.decide(
        Decline(reason="wrong order", withdrawn=True), run_id=shown.run_id, decided_by="alex"
    )
    result = await stream.result()

    assert refunds.done == []
    assert result.text == "Refunded."  # the model answered after being told
    model = agent.model
    assert isinstance(model, ScriptedModel)
    told = model.requests[-1].messages[-1]
    assert "withdrew" in str(told.content) and "wrong order" in str(told.content)
    with pytest.raises(AlreadyDecided) as again:
        await agent.approve_tool_call(run_id=shown.run_id, decided_by="sam")
    assert again.value.decided_by == "alex"


# -- A: the tool's definition is pinned --------------------------------------------------------


class _Source:
    """Tools offered besides the agent's own, replaceable (as an MCP server's are)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def current_tools(self) -> Mapping[str, Tool]:
        return {"refund": self.tool}


async def test_a_redefined_tool_runs_nothing_and_the_call_is_presented_again(
    storage: Storage,  # noqa: F811
) -> None:
    refunds = Refunds()
    source = _Source(refunds.tool("Refund an order"))
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("refund", {"order": 49, "amount": 5}, id="c1"), reply("ok")]),
        storage=storage,
    ).served(ServedParts(tools=source))
    shown = await _asked(agent)
    source.tool = refunds.tool("Refund an order, times 1000")

    with pytest.raises(ToolChanged) as changed:
        await agent.approve_tool_call(
            run_id=shown.run_id, fingerprint=shown.fingerprint, decided_by="sam"
        )

    assert refunds.done == []
    assert changed.value.code == "APPROVAL_TOOL_CHANGED"
    again = changed.value.call
    assert isinstance(again, PendingToolCall)
    assert again.definition_digest == source.tool.definition_digest != shown.definition_digest
    pending = await agent.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending == again and pending.approved_by == []
    done = await agent.approve_tool_call_generate(run_id=shown.run_id, decided_by="sam")
    assert done.text == "ok" and refunds.done == [{"order": 49, "amount": 5}]


async def test_a_decision_naming_the_old_definition_is_refused_once_presented_again() -> None:
    refunds = Refunds()
    source = _Source(refunds.tool("Refund an order"))
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("refund", {"order": 49, "amount": 5}, id="c1"), reply("ok")]),
        storage=InMemoryStorage(),
    ).served(ServedParts(tools=source))
    shown = await _asked(agent)
    source.tool = refunds.tool("Refund an order, times 1000")
    with pytest.raises(ToolChanged):
        await agent.approve_tool_call(run_id=shown.run_id, decided_by="sam")

    old = DecisionRequest(
        run_id=shown.run_id,
        tool_call_id="c1",
        fingerprint=shown.fingerprint,
        decided_by="sam",
        definition_digest=shown.definition_digest,
    )
    with pytest.raises(ToolChanged) as again:
        await agent.decide_request(old, Approve())
    assert again.value.presented_again is False and refunds.done == []


def _confirm_above_1000(
    tool_name: str, tool_id: str, path: tuple[str, ...], args: dict[str, Any]
) -> CallRules | None:
    """Refunds over 1,000 ask to confirm (one approver) and expire within 10 minutes."""
    if float(args.get("amount", 0)) > 1000:
        return CallRules(require_approval=True, confirm=True, ttl_seconds=600)
    return None


async def test_an_edit_needing_a_confirm_the_shown_call_lacked_is_presented_again() -> None:
    refunds = Refunds()
    agent = _agent(InMemoryStorage(), refunds, rules=_confirm_above_1000)
    shown = await _asked(agent)

    stream = await agent.approve_tool_call(
        run_id=shown.run_id, args={"order": 49, "amount": 5000}, decided_by="sam"
    )
    [again] = [c async for c in stream.full_stream if isinstance(c, ToolCallApprovalChunk)]

    assert refunds.done == [] and (await stream.result()).finish_reason == "suspended"
    assert (again.approvals_required, again.approved_by) == (1, ["sam"])
    assert again.expires_at is not None and again.suspended_at is not None
    assert abs((again.expires_at - again.suspended_at).total_seconds() - 600) < 5
    # shown again (with its confirm), the editor's own approval of it runs it
    done = await agent.approve_tool_call_generate(
        run_id=shown.run_id, fingerprint=again.fingerprint, decided_by="sam"
    )
    assert done.text == "Refunded." and refunds.done == [{"order": 49, "amount": 5000}]


async def test_edited_arguments_that_are_not_strict_json_claim_nothing() -> None:
    refunds = Refunds()
    agent = _agent(InMemoryStorage(), refunds)
    shown = await _asked(agent)
    with pytest.raises(InvalidToolArgs):
        await agent.approve_tool_call(
            run_id=shown.run_id, args={"order": 49, "amount": float("nan")}, decided_by="sam"
        )
    pending = await agent.pending_call(run_id=shown.run_id, tool_call_id="c1")
    assert pending is not None and pending.fingerprint == shown.fingerprint
    assert refunds.done == []
