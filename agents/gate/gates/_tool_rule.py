"""Gate: the tool's own rule and the run's (SPEC 3.2).

A call waits when the tool's ``require_approval`` is True or its predicate holds, or when the
run's ``require_tool_approval`` is True or its predicate holds (a predicate that raises holds:
fail safe). The tool's ``approvals`` is the least quorum. Predicates are asked only while the
call is not held yet: what already holds needs no predicate to see the call.
"""

from __future__ import annotations

from dataclasses import replace

from agents.gate._proposal import Needs, Proposal
from tools import ApprovalContext, evaluate_predicate

RUN_HOLDS_ALL = "this run asks for approval before any tool runs"
RUN_HOLDS_THIS = "this run's rule asks for approval of this call"


async def tool_rule(proposal: Proposal, needs: Needs) -> Needs:
    """The tool's ``require_approval`` and ``approvals``, then the run's rule."""
    tool = proposal.tool
    context: ApprovalContext | None = None
    if tool is not None:
        needs = replace(needs, approvals=max(needs.approvals, tool.approvals))
        if tool.require_approval is True:
            needs = needs.hold(tool.approval_reason())
        elif tool.require_approval is not False and not needs.held:
            context = _context(proposal)
            if await tool.needs_approval(context):
                needs = needs.hold(tool.approval_reason())
    rule = proposal.run_rule
    if rule is True:
        return needs.hold(RUN_HOLDS_ALL)
    held_by_rule = (
        rule is not False
        and not needs.held
        and await evaluate_predicate(rule, context or _context(proposal))
    )
    return needs.hold(RUN_HOLDS_THIS) if held_by_rule else needs


def _context(proposal: Proposal) -> ApprovalContext:
    return ApprovalContext(
        tool_name=proposal.tool_name,
        args=dict(proposal.args),
        request_context=dict(proposal.request_context),
    )
