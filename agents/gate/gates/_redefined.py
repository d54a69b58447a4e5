"""Gate: an approval runs only the tool definition the call was presented with (SPEC 3.3
"An approval binds what runs", 14).

The tool that would run must still have the call's ``definition_digest``, and the card the
decider saw must have shown it. Else nothing runs: the call is proposed again with the new
definition through the proposal gates (its reasons, confirm and grants as the new definition
says; approvals counting from zero, never fewer than before; the same time to decide it) and
presented again (``redefined``, ``ToolChanged`` raised with it), or, when it had been presented
again already, the decision on the old one is refused.
"""

from __future__ import annotations

from datetime import timedelta

from agents.errors import ToolChanged
from agents.gate._judgement import Case
from agents.gate._present import next_round
from agents.gate._proposal import Proposal
from agents.gate._proposing import propose
from agents.gate.gates._host_rule import owner_of


async def same_definition(case: Case) -> Case:
    """An approval runs only the definition the call was presented with."""
    pending = case.pending
    if case.decision.kind != "approve" or pending.definition_digest is None:
        return case
    seen = case.request.definition_digest
    if seen is not None and seen != pending.definition_digest:
        raise ToolChanged(
            case.state.run_id,
            pending.tool_call_id,
            shown_digest=seen,
            current_digest=pending.definition_digest,
            call=case.call(),
            presented_again=False,
        )
    tool = case.tool
    if tool is None or tool.definition_digest == pending.definition_digest:
        return case
    state = case.state
    needs = await propose(
        Proposal(
            tool_name=pending.tool_name,
            tool=tool,
            args=pending.args,
            agent_path=tuple(pending.agent_path),
            request_context=state.request_context,
            run_ttl=state.approval_ttl_seconds,
            host=owner_of(case.rt, pending.agent_path),
        )
    )
    grants = needs.grants
    proposal = next_round(
        pending,
        definition_digest=tool.definition_digest,
        approvals_required=max(pending.approvals_required, needs.approvals),
        requirement=needs.requirement,
        grantable=grants is not None and pending.delegate is None,
        grant_max_seconds=grants.max_seconds if grants is not None else None,
        grant_max_uses=grants.max_uses if grants is not None else None,
    )
    if pending.expires_at is not None:  # the same time to decide it as the call shown had
        window = max(pending.expires_at - pending.suspended_at, timedelta(seconds=0))
        proposal = proposal.model_copy(update={"expires_at": proposal.suspended_at + window})
    return case.presenting(
        proposal,
        claimed_as="redefined",
        detail={
            "shown_digest": pending.definition_digest,
            "current_digest": tool.definition_digest,
        },
        changed=ToolChanged(
            case.state.run_id,
            pending.tool_call_id,
            shown_digest=pending.definition_digest,
            current_digest=tool.definition_digest,
            call=proposal.public(),
        ),
    )
