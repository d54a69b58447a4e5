"""Gate: a standing grant approving a proposed call instead of a person (SPEC 15).

A gated call (one approver's, no confirm, not edited, of this agent) is approved by a grant
usable now, of the same tool, agent path and scope, whose pinned arguments it has, made under
the SAME rule (``Requirement.rule``) for the SAME tool definition (``definition_digest``), and
whose grantor the decision policy lets approve it alone at this moment (never its requester).
``usable_grant`` only reads; the claim (the grantor's decision, ``source="grant"``), the use
and their audit are written with the snapshot that stores the call (``agents.running``), so a
granted call is written once, as decided. A use the grant no longer allows (used up, expired,
revoked meanwhile) writes nothing, and the call pends as usual.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from agents._runtime import Runtime
from agents.gate._claims import leased_claim, report_decision
from agents.gate.gates._authority import refusal_of
from agents.gate.gates._grants import pinned
from agents.stored._state import PendingCallState, RunState
from storage import AuditEvent, ClaimRecord, GrantRecord, GrantUse, utcnow

GRANT_SOURCE = "grant"
"""The ``source`` of a decision a standing grant took."""


@dataclass(frozen=True, kw_only=True)
class Granted:
    """A proposed call a grant approves: what its claim writes, and the grant after the use."""

    pending: PendingCallState
    grant: GrantRecord
    """The grant as it is after this use."""
    claim: ClaimRecord
    """The grantor's decision (held by this process, at epoch 0)."""
    event: AuditEvent
    """Its ``decided`` audit event."""
    use: GrantUse
    """The use counted with the claim."""


async def usable_grant(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    *,
    used: Mapping[str, int] | None = None,
) -> Granted | None:
    """The grant that approves ``pending`` now, with the claim to write (nothing is written).

    ``used``: uses of grants (by id) that earlier calls of the same model step take in the
    same write; a grant with no use left after them approves nothing more.
    """
    used = used or {}
    if not _may_be_granted(pending) or (state.thread_id is None and state.resource_id is None):
        return None
    now = utcnow()
    candidates = await rt.storage.list_grants(
        agent_id=state.agent_id,
        tool_name=pending.tool_name,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        active_at=now,
    )
    for grant in reversed(candidates):  # the oldest first: it ends first
        earlier = used.get(grant.grant_id, 0)
        if grant.uses + earlier < grant.max_uses and await _applies(rt, grant, pending):
            return _granted(
                rt, state, pending, dataclasses.replace(grant, uses=grant.uses + earlier)
            )
    return None


def _may_be_granted(pending: PendingCallState) -> bool:
    """Only a single approver's call, not edited, of this agent, whose rule allows grants."""
    return (
        pending.requires_approval
        and pending.grantable
        and pending.approvals_required == 1
        and pending.edited_from is None
        and pending.delegate is None
    )


async def _applies(rt: Runtime, grant: GrantRecord, pending: PendingCallState) -> bool:
    """Same path, pins, rule and definition, and the grantor may approve this call alone."""
    if grant.agent_path != pending.agent_path:
        return False
    if pinned(pending.args, grant.free_args) != grant.pins:
        return False
    if grant.rule != pending.requirement.rule:
        return False  # made under another rule (a stricter args_above one, say)
    if grant.definition_digest != pending.definition_digest:
        return False  # made for a definition of the tool that is gone
    if pending.requested_by is not None and pending.requested_by == grant.granted_by:
        return False  # a requester never approves their own call through their grant
    return await refusal_of(rt, pending.public(), grant.granted_by, "approve") is None


def _granted(
    rt: Runtime, state: RunState, pending: PendingCallState, grant: GrantRecord
) -> Granted:
    detail = {"grant_id": grant.grant_id}
    claim, event = leased_claim(
        rt,
        state,
        pending,
        "approved",
        decided_by=grant.granted_by,
        source=GRANT_SOURCE,
        detail=detail,
    )
    return Granted(
        pending=pending,
        grant=dataclasses.replace(grant, uses=grant.uses + 1),
        claim=claim,
        event=event,
        use=GrantUse(grant_id=grant.grant_id, at=claim.decided_at),
    )


def told_granted(rt: Runtime, state: RunState, granted: Granted) -> None:
    """Tell the observers a grant decided a call (``outcome="granted"``)."""
    report_decision(rt, state, granted.pending, "approved", GRANT_SOURCE, outcome="granted")
