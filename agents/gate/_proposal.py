"""What a proposed call is and what it needs: the values the proposal gates pass along
(``agents.gate._chain.propose`` asks them in order, once; SPEC 3.2, 3.3, 11, 15).

A ``Proposal`` is a call about to run or wait: the model's call in the run loop, an edited call,
a call of a redefined tool. Each gate of ``PROPOSAL_GATES`` reads it and adds to the ``Needs``
so far (never takes away: a gate only holds, raises a quorum, adds a reason), and the last
ones settle what follows from the rest (no grant with a quorum or a confirm). The answer is
stored with the call (``PendingToolCall.requirement`` and its fields), so every surface shows
and enforces the same one.

    tool's own rule → run's rule → host's rule → definition → grant limits
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from agents._messages import ToolCallPart
from agents._results import Requirement
from agents._runtime import Runtime
from agents.decisions import CallRules, GrantLimits
from agents.stored._state import RunState
from tools import ApprovalPredicate, Tool


@dataclass(frozen=True, kw_only=True)
class Proposal:
    """A call about to run or wait, as the gates read it."""

    tool_name: str
    """The name the model called it by (the inner tool for a sub-agent's call)."""
    tool: Tool | None
    """The tool that would run (None: the agent has no such tool; it fails as it runs)."""
    args: dict[str, Any]
    """The arguments it would run with."""
    agent_path: tuple[str, ...]
    """From the top agent down to the agent owning the tool."""
    request_context: Mapping[str, Any] = field(default_factory=dict)
    """The run's request context (what predicates see)."""
    run_rule: bool | ApprovalPredicate = False
    """The run's ``require_tool_approval`` (a boolean, or a predicate over the call)."""
    run_ttl: float | None = None
    """The run's ``approval_ttl_seconds`` (None: no expiry unless a rule gives one)."""
    host: Runtime | None = None
    """The agent owning the call, whose host rules apply (None: the agent is gone, and the
    call needs everything it could: held, confirmed)."""

    @classmethod
    def of_call(
        cls, rt: Runtime, call: ToolCallPart, state: RunState, run_rule: bool | ApprovalPredicate
    ) -> Proposal:
        """A call the model of ``rt`` made in the run ``state``, as the gate reads it."""
        return cls(
            tool_name=call.name,
            tool=rt.tools.get(call.name),
            args=call.args,
            agent_path=(rt.id,),
            request_context=state.request_context,
            run_rule=run_rule,
            run_ttl=state.approval_ttl_seconds,
            host=rt,
        )


@dataclass(frozen=True, kw_only=True)
class Needs:
    """What a proposed call needs, as the gates have answered so far."""

    held: bool = False
    """It waits for a person before it runs."""
    approvals: int = 1
    """Distinct approvers it needs."""
    grants: GrantLimits | None = None
    """The standing grants approving it may create (None: none)."""
    requirement: Requirement = field(default_factory=Requirement)
    """Why, under which rule, who may approve, confirm, TTL, escalation: stored with it."""
    host_rules: CallRules | None = None
    """What the host's rules said (None: no host rules, or no rule matched)."""

    def hold(self, reason: str) -> Needs:
        """These needs, held, with one more reason (said once)."""
        reasons = self.requirement.reasons
        if reason not in reasons:
            reasons = [*reasons, reason]
        return replace(
            self, held=True, requirement=self.requirement.model_copy(update={"reasons": reasons})
        )

    def expires_at(self, now: datetime) -> datetime | None:
        """When the call stops being decidable, presented ``now`` (None: never)."""
        ttl = self.requirement.ttl_seconds
        return None if ttl is None else now + timedelta(seconds=ttl)


ProposalGate = Callable[[Proposal, Needs], Awaitable[Needs]]
"""One gate: reads the proposal, returns the needs with what it adds."""
