"""What the judgement gates pass along (``Case``) and what they answer (``Verdict``).

A ``Case`` is one decision on one stored call: the call as storage has it, who decides what,
from where. Each gate of ``agents.gate._chain.JUDGEMENT_GATES`` reads it and refuses (raising
the runtime's error), passes it on, or passes it on with what it settles: the detail the
claim records, a grant to create, a new proposal that replaces the call, the approvers of a
quorum. The ``Verdict`` says what the decision does: ``claims`` (the call is decided: it runs,
or is declined, expired, resumed), ``counts`` (one more approval of a quorum that is not met),
or ``presents`` (nothing runs: the call is presented again, edited or redefined).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from agents._results import PendingToolCall, Requirement
from agents._runtime import Runtime
from agents.decisions import Decision, DecisionRequest
from agents.errors import AgentError, ToolChanged
from agents.gate._found import Found
from agents.gate.gates._host_rule import owner_of, rules_in_force
from agents.stored._state import PendingCallState, RunState
from storage import GrantRecord
from tools import Tool

Effect = Literal["claims", "counts", "presents"]
"""What a decision does: decides the call, adds one approval of a quorum, or presents the call
again (edited arguments that need more, a redefined tool)."""


@dataclass(frozen=True, kw_only=True)
class Presenting:
    """The call replaced by a new proposal (nothing of it runs)."""

    proposal: PendingCallState
    """The new proposal (same ``tool_call_id``, next round)."""
    claimed_as: Literal["edited", "redefined"]
    """What the shown round's claim records."""
    detail: dict[str, Any]
    """What the audit records about it."""
    changed: ToolChanged | None = None
    """The tool was redefined: raised to the decider once the proposal is stored."""


@dataclass(frozen=True, kw_only=True)
class Case:
    """One decision on one stored call, as the judgement gates see it."""

    rt: Runtime
    """The agent the decision was asked of (a supervisor for a sub-agent's call)."""
    found: Found
    """The call as storage has it, with its run, approvals and escalation steps."""
    decision: Decision
    """What is decided (gates may settle it: edited args equal to the shown ones approve)."""
    request: DecisionRequest
    """Who decides, from where, having seen which definition."""
    tool: Tool | None
    """The tool that would run (None: the agent no longer has it)."""
    detail: dict[str, Any] = field(default_factory=dict)
    """What the claim and its audit record besides the decision."""
    grant: GrantRecord | None = None
    """A standing grant the approval creates (stored with the claim)."""
    presents: Presenting | None = None
    """The call presented again instead of decided."""
    approvers: list[str] | None = None
    """A quorum call's approvers counting now, this decider included (None: no quorum)."""
    discounted: dict[str, str] = field(default_factory=dict)
    """Approvers the policy in force refused when the quorum was checked again (by approver:
    the refusing rule): they no longer count, and the snapshot says so."""

    @property
    def pending(self) -> PendingCallState:
        return self.found.pending

    @property
    def state(self) -> RunState:
        return self.found.state

    @property
    def decided_by(self) -> str | None:
        return self.request.decided_by

    @cached_property
    def requirement(self) -> Requirement:
        """The call's requirement, with who may approve under the rule in force now."""
        pending = self.pending
        owner = owner_of(self.rt, pending.agent_path)
        if owner is None:
            return pending.requirement
        return rules_in_force(owner, pending.requirement, pending.tool_name, pending.args)

    def call(self, approved_by: list[str] | None = None) -> PendingToolCall:
        """The call as a decision policy sees it: storage's approvers (or ``approved_by``),
        escalation steps, and the rule in force."""
        approvers = self.found.approved_by if approved_by is None else approved_by
        public = self.pending.public(approvers, self.found.escalations)
        return public.model_copy(update={"requirement": self.requirement})

    def presenting(
        self,
        proposal: PendingCallState,
        *,
        claimed_as: Literal["edited", "redefined"],
        detail: dict[str, Any],
        changed: ToolChanged | None = None,
    ) -> Case:
        """This case, the call presented again as ``proposal``."""
        shown = Presenting(proposal=proposal, claimed_as=claimed_as, detail=detail, changed=changed)
        return replace(self, presents=shown)

    def with_detail(self, **more: Any) -> Case:
        return replace(self, detail={**self.detail, **more})


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What a decision does to a call (the gate's one answer to "may this person decide this
    call, and what happens if they do"), or why it may not (``refused``)."""

    effect: Effect | None
    """``claims``, ``counts``, ``presents``; None when refused."""
    refused: AgentError | None = None
    """Why not, as the runtime's error (``NotAllowedToDecide`` with its ``rule``,
    ``ApprovalExpired``, ``DuplicateApproval``, …); None: allowed."""
    approvers: list[str] = field(default_factory=list)
    """Quorum calls: who would count after this decision."""
    needed: int = 1
    """Distinct approvers the call needs."""
    grant: GrantRecord | None = None
    """The standing grant the approval would create."""

    @property
    def allowed(self) -> bool:
        return self.refused is None


def verdict_of(case: Case) -> Verdict:
    """The verdict a case reached through every gate."""
    needed = case.pending.approvals_required
    if case.presents is not None:
        return Verdict(effect="presents", needed=needed)
    if case.approvers is not None and len(case.approvers) < needed:
        return Verdict(effect="counts", approvers=case.approvers, needed=needed)
    return Verdict(effect="claims", approvers=case.approvers or [], needed=needed, grant=case.grant)
