"""Edited arguments are a new proposal of the same call, gated again under the rules that
match THEM (SPEC 3.3), inside the decision: never the rules of the arguments shown.

The edit runs at once only when it needs nothing more than the call as shown: the host's
rules for the edited arguments ask no more approvals (the quorum is never lowered: the larger
of the shown call's, the tool's and the edited rule's), no confirm the shown ones lacked, and
the decision policy lets the editor approve the edited call, so their approval completes it.
Otherwise the edited call is presented again (``agents.deciding._present``), with the editor's
approval carried when they may approve it: an edit never lowers what a call needs.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents._fingerprint import fingerprint
from agents._runtime import Runtime
from agents.deciding._claims import Found
from agents.deciding._present import next_round
from agents.deciding._state import PendingCallState
from agents.decisions import ASKS_WITHOUT_DECIDER, CallRules, ask_policy


def owner_of(rt: Runtime, agent_path: list[str]) -> Runtime | None:
    """The runtime of the agent owning a call (``agent_path`` from the top agent down)."""
    owner = rt
    for agent_id in agent_path[1:]:
        nxt = next((a for a in owner.agents.values() if a.id == agent_id), None)
        if nxt is None:
            return None
        owner = nxt
    return owner


async def edited_proposal(
    rt: Runtime, found: Found, args: dict[str, Any], decided_by: str | None
) -> PendingCallState | None:
    """None when the edit may run now with the editor's approval; else the new proposal the
    edited call becomes (the editor's approval carried when they may approve it)."""
    pending, state = found.pending, found.state
    owner = owner_of(rt, pending.agent_path)
    tool = owner.tools.get(pending.tool_name) if owner is not None else None
    if owner is None:  # the agent is gone: no rule can be known, ask for more (fail safe)
        shown: CallRules | None = None
        edited: CallRules | None = CallRules(require_approval=True, confirm=True)
    else:
        shown = owner.rules_for(pending.tool_name, pending.args)
        edited = owner.rules_for(pending.tool_name, args)
    needed = max(
        pending.approvals_required,
        tool.approvals if tool is not None else 1,
        (edited.approvals if edited is not None else None) or 1,
    )
    ttl = state.approval_ttl_seconds
    if edited is not None and edited.ttl_seconds is not None:
        ttl = edited.ttl_seconds
    proposal = next_round(
        pending,
        args=dict(args),
        local_args=dict(args) if pending.delegate is None else pending.local_args,
        fingerprint=fingerprint(pending.tool_name, args),
        approvals_required=needed,
        edited_from=dict(pending.args),
        definition_digest=tool.definition_digest if tool is not None else None,
        grants=None,  # an edited proposal never creates a grant, nor is approved by one
    )
    if ttl is not None:
        proposal = proposal.model_copy(
            update={"expires_at": proposal.suspended_at + timedelta(seconds=ttl)}
        )
    allowed = await _may_approve(rt, proposal, decided_by)
    more_confirm = bool(edited and edited.confirm) and not bool(shown and shown.confirm)
    if needed == 1 and allowed and not more_confirm:
        return None
    carried = [decided_by] if allowed and decided_by is not None else []
    return proposal.model_copy(update={"carried_approvals": carried})


async def _may_approve(rt: Runtime, proposal: PendingCallState, decided_by: str | None) -> bool:
    """Whether the decision policy lets ``decided_by`` approve the edited call."""
    policy = rt.decision_policy
    if policy is None:
        return True
    if decided_by is None and getattr(policy, ASKS_WITHOUT_DECIDER, False) is not True:
        return True
    return await ask_policy(policy, proposal.public(), decided_by, "approve") is None
