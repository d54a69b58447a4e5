"""Gate: the quorum (two-person rule, SPEC 3.3).

A call that needs N distinct approvers is approved by people (``decided_by``: a quorum
approval naming nobody is a configuration error), each once (``DuplicateApproval``). Each
approval counts; the one that would complete the quorum asks the policy in force again about
every approval counted (authority at decision time): an approver it no longer allows (removed
from the approvers, or from their user group) no longer counts, and the call keeps pending
with the rest. ``count`` is that one count, used by the gate, after an approval is recorded
(storage's tally), and after a batch (another approval may have landed meanwhile).
"""

from __future__ import annotations

from dataclasses import replace

from agents.decisions import Approve
from agents.errors import AgentConfigError, DuplicateApproval
from agents.gate._judgement import Case
from agents.gate.gates._authority import still_allowed


async def quorum_approver(case: Case) -> Case:
    """A quorum's approval names a person who has not approved this call yet."""
    decision, pending = case.decision, case.pending
    if not isinstance(decision, Approve) or pending.approvals_required <= 1:
        return case
    if case.decided_by is None:
        raise AgentConfigError(
            f"tool call {pending.tool_call_id!r} needs {pending.approvals_required} "
            "different approvers: pass decided_by= with each approval"
        )
    if decision.args is None and case.decided_by in case.found.approved_by:
        raise DuplicateApproval(
            case.state.run_id,
            pending.tool_call_id,
            approver=case.decided_by,
            approved_by=case.found.approved_by,
            needed=pending.approvals_required,
        )
    return case


async def quorum_tally(case: Case) -> Case:
    """Who counts once this approval does (``Case.approvers``), asked again at the quorum."""
    decision, pending = case.decision, case.pending
    if case.presents is not None or not isinstance(decision, Approve):
        return case
    if pending.approvals_required <= 1 or case.decided_by is None:
        return case
    approvers, refused = await count(case, [*case.found.approved_by, case.decided_by])
    case = replace(case, approvers=approvers, discounted=refused)
    if len(approvers) >= pending.approvals_required:
        case = case.with_detail(approved_by=approvers)
    return case


async def count(case: Case, stored: list[str]) -> tuple[list[str], dict[str, str]]:
    """Who counts toward ``case``'s quorum given storage's approvals ``stored`` (this
    decider's included); once they would meet it, the policy in force is asked again about
    each, and those it refuses are left out (and returned, by approver: the rule)."""
    pending = case.pending
    approvers = pending.counted(stored)
    if len(approvers) < pending.approvals_required:
        return approvers, {}
    refused = await still_allowed(case, approvers)
    return [a for a in approvers if a not in refused], refused
