"""Writing what the gates decided about one decision, atomically (single decisions; a batch's
writes are ``agents.deciding._many``'s, through the same ``count``):

- ``presents``: the shown round is replaced by the new proposal (``present_again``);
- a quorum's approval: recorded (``Storage.add_approval``, atomic), then counted from what
  storage holds NOW with the policy in force (``count``): approvers it no longer allows are
  discounted in the snapshot, and the call is claimed only when the quorum is met;
- ``claims``: the claim, its audit, and a grant it creates, in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agents.decisions import Approve
from agents.errors import DuplicateApproval
from agents.gate._claims import claim
from agents.gate._found import already_decided
from agents.gate._judgement import Case
from agents.gate._present import present_again
from agents.gate.gates._quorum import count
from agents.stored._state import PendingCallState, RunState, still_waiting
from storage import (
    ApprovalRecord,
    ClaimRecord,
    SnapshotVersionConflict,
    StateChange,
    utcnow,
)

_ATTEMPTS = 5
"""How often a discount is written again over a snapshot that changed meanwhile."""


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """What was written for a judged decision."""

    effect: Literal["claims", "counts", "presents"]
    pending: PendingCallState
    """The call as decided (with its discounts), or the new proposal that replaced it."""
    claim: ClaimRecord | None = None
    """The claim taken (``claims``)."""
    approvers: list[str] = field(default_factory=list)
    """Quorum calls: who counts now."""
    state: RunState | None = None
    """``presents``: the run as stored with the new proposal."""


async def record(case: Case) -> Recorded:
    """Write ``case`` (judged: every gate passed) and say what was written."""
    pending = case.pending
    source = case.request.source
    if case.presents is not None:
        shown = case.presents
        stored = await present_again(
            case.rt,
            case.found,
            shown.proposal,
            claimed_as=shown.claimed_as,
            decided_by=case.decided_by,
            source=source,
            detail=shown.detail,
        )
        return Recorded(effect="presents", pending=shown.proposal, state=stored)
    detail = dict(case.detail)
    if case.approvers is not None and case.decided_by is not None:
        approvers, pending = await _vote(case, case.decided_by)
        if len(approvers) < pending.approvals_required:
            return Recorded(effect="counts", pending=pending, approvers=approvers)
        detail["approved_by"] = approvers
    taken = await claim(
        case.rt,
        case.state,
        pending,
        case.decision,
        decided_by=case.decided_by,
        source=source,
        detail=detail,
        grant=case.grant,
    )
    return Recorded(
        effect="claims", pending=pending, claim=taken, approvers=detail.get("approved_by", [])
    )


async def _vote(case: Case, decided_by: str) -> tuple[list[str], PendingCallState]:
    """Record ``decided_by``'s approval of a quorum call; who counts now (the policy in force
    asked again once the quorum would be met), and the call with its discounts."""
    pending, state = case.pending, case.state
    tally = await case.rt.storage.add_approval(
        ApprovalRecord(
            run_id=state.run_id, key=pending.claim_key, approver=decided_by, approved_at=utcnow()
        )
    )
    if tally.claim is not None:
        raise already_decided(tally.claim)
    stored = [a.approver for a in tally.approvals]
    if not tally.added:
        raise DuplicateApproval(
            state.run_id,
            pending.tool_call_id,
            approver=decided_by,
            approved_by=stored,
            needed=pending.approvals_required,
        )
    approvers, refused = await count(case, stored)
    await case.rt.audit(
        "approval-recorded",
        state,
        tool_call_id=pending.tool_call_id,
        actor=decided_by,
        data={
            "tool_name": pending.tool_name,
            "fingerprint": pending.fingerprint,
            "approved_by": approvers,
            "approvals_required": pending.approvals_required,
        },
    )
    if refused:
        pending = await discount(case, refused)
    return approvers, pending


async def discount(case: Case, refused: dict[str, str]) -> PendingCallState:
    """Write into the snapshot that ``refused`` no longer count (version-checked, retried
    over a run that changed meanwhile); the call with its discounts."""
    rt, record, state, pending = case.rt, case.found.record, case.state, case.pending
    updated = pending.model_copy(update={"discounted": [*pending.discounted, *refused]})
    for _ in range(_ATTEMPTS):
        target = next((p for p in state.pending if p.claim_key == pending.claim_key), None)
        if target is None:  # decided meanwhile: the claim will say so
            return updated
        new = [a for a in refused if a not in target.discounted]
        updated = target.model_copy(update={"discounted": [*target.discounted, *new]})
        changed = state.model_copy(
            update={"pending": [updated if p is target else p for p in state.pending]}
        )
        audit = rt.audit_event(
            "refused",
            state,
            tool_call_id=pending.tool_call_id,
            data={
                "tool_name": pending.tool_name,
                "fingerprint": pending.fingerprint,
                "discounted": dict(refused),
                "reason": "no longer allowed to approve under the policy in force",
            },
        )
        snapshot = still_waiting(record, changed)
        try:
            await rt.storage.commit(StateChange(snapshot=snapshot, audit=[audit]))
            return updated
        except SnapshotVersionConflict:
            fresh = await rt.storage.load_snapshot(state.run_id)
            if fresh is None:
                return updated
            record, state = fresh, RunState.model_validate(fresh.data)
    return updated


def is_approval(case: Case) -> bool:
    return isinstance(case.decision, Approve)
