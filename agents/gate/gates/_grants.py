"""Gate: standing grants (SPEC 15), where they are allowed and created.

Proposing, ``grant_limits`` settles which grants approving a call may create: its rule's
``grants`` (a rule that says none allows none), else, where no rule matched, its tool's
``grants=True`` (no bounds of the rule's own); never with a quorum or a confirm.

Deciding, ``grant_request`` checks an ``Approve(grant=...)`` (the one validator, for every
surface: the API, the grant modal, Python): the call is grantable, not edited, one approver's,
named by a person, within its rule's bounds and within ``MAX_GRANT_SECONDS`` /
``MAX_GRANT_USES`` whatever the rule says; it builds the record the claim stores, bound to the
rule the call falls under and its tool's definition (a later call under another rule, or of a
redefined tool, is never approved by it). ``GrantNotAllowed`` before anything is claimed.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from agents._ids import new_id
from agents.decisions import Approve, GrantLimits
from agents.errors import GrantNotAllowed
from agents.gate._judgement import Case
from agents.gate._proposal import Needs, Proposal
from storage import GrantRecord, utcnow

MAX_GRANT_SECONDS = 366 * 86400
"""The longest any grant lasts, whatever its rule says (a year and a day)."""
MAX_GRANT_USES = 1_000_000
"""The most calls any grant approves, whatever its rule says."""


async def grant_limits(proposal: Proposal, needs: Needs) -> Needs:
    """The standing grants approving the proposed call may create."""
    if needs.approvals > 1 or needs.requirement.confirm:
        return replace(needs, grants=None)
    rules = needs.host_rules
    if rules is not None and rules.grants is not None:
        return replace(needs, grants=rules.grants)
    no_rule = rules is None or not rules.matched
    if no_rule and proposal.tool is not None and proposal.tool.grants:
        return replace(needs, grants=GrantLimits())
    return replace(needs, grants=None)


async def grant_request(case: Case) -> Case:
    """The grant an approval asks for, checked; the case carries the record to store."""
    decision = case.decision
    if not isinstance(decision, Approve) or decision.grant is None:
        return case
    request, pending, state = decision.grant, case.pending, case.state

    def refuse(reason: str) -> GrantNotAllowed:
        return GrantNotAllowed(reason, tool_call_id=pending.tool_call_id)

    if decision.args is not None and decision.args != pending.args:
        raise refuse("an approval with edited arguments cannot create a grant")
    if pending.edited_from is not None:
        raise refuse("an edited proposal cannot create a grant")
    if pending.approvals_required > 1:
        raise refuse(f"{pending.tool_name} needs {pending.approvals_required} approvers")
    if not pending.grantable or pending.delegate is not None:
        raise refuse(f"the rule for {pending.tool_name} allows no standing grant")
    if case.decided_by is None:
        raise refuse("a grant is a person's: pass decided_by")
    problem = grant_bounds_problem(
        request.seconds, request.max_uses, pending.grant_max_seconds, pending.grant_max_uses
    )
    if problem is not None:
        raise refuse(problem)
    unknown = sorted(set(request.free_args) - set(pending.args))
    if unknown:
        raise refuse(f"{', '.join(unknown)} is not an argument of this call")
    scope = state.thread_id if request.within == "thread" else state.resource_id
    if scope is None:
        raise refuse(f"this run has no {request.within} to scope a grant to")
    now = utcnow()
    record = GrantRecord(
        grant_id=new_id(),
        agent_id=state.agent_id,
        tool_name=pending.tool_name,
        agent_path=list(pending.agent_path),
        thread_id=state.thread_id if request.within == "thread" else None,
        resource_id=state.resource_id if request.within == "resource" else None,
        pins=pinned(pending.args, request.free_args),
        granted_by=case.decided_by,
        created_at=now,
        expires_at=now + timedelta(seconds=request.seconds),
        max_uses=request.max_uses,
        free_args=sorted(set(request.free_args)),
        run_id=state.run_id,
        tool_call_id=pending.tool_call_id,
        rule=pending.requirement.rule,
        definition_digest=pending.definition_digest,
    )
    return replace(case, grant=record).with_detail(grant_id=record.grant_id)


def grant_bounds_problem(
    seconds: float, max_uses: int, max_seconds: float | None, most_uses: int | None
) -> str | None:
    """Why a grant of ``seconds`` and ``max_uses`` may not be made under a rule allowing
    ``max_seconds`` / ``most_uses`` (None: the rule sets no bound), in words; None: it may."""
    longest = min(MAX_GRANT_SECONDS, max_seconds or MAX_GRANT_SECONDS)
    if not 0 < seconds <= longest:
        return f"a grant lasts more than 0 and at most {longest:g} seconds here, not {seconds:g}"
    most = min(MAX_GRANT_USES, most_uses or MAX_GRANT_USES)
    if not 1 <= max_uses <= most:
        return f"a grant approves 1 to {most} calls here, not {max_uses}"
    return None


def pinned(args: dict[str, Any], free_args: Any) -> dict[str, Any]:
    """Every argument but the free ones: what a grant pins."""
    free = set(free_args)
    return {name: value for name, value in args.items() if name not in free}
