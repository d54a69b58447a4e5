"""Authority at decision time (SPEC 3.3): when the approval that would complete a quorum
claims, every approval counted is asked again of the decision policy in force. One whose
author may no longer approve the call (dropped from the approvers, or from a user group)
no longer counts: it is discounted in the snapshot (so every reader, card and listing sees
who still counts) and the call keeps pending with the rest.
"""

from __future__ import annotations

from agents._runtime import Runtime
from agents.deciding._claims import Found
from agents.deciding._state import PendingCallState, RunState
from agents.decisions import ask_policy
from storage import SnapshotRecord, SnapshotVersionConflict, StateChange

_ATTEMPTS = 5
"""How often the discount is written again over a snapshot that changed meanwhile."""


async def still_counting(
    rt: Runtime, found: Found, approvers: list[str], decided_by: str
) -> tuple[PendingCallState, list[str]]:
    """The call and the approvers of ``approvers`` the policy still lets approve it (the
    decider's own approval was just checked); the refused ones are discounted in storage."""
    policy = rt.decision_policy
    pending = found.pending
    if policy is None:
        return pending, approvers
    call = found.call(approvers)
    refused: dict[str, str] = {}
    for approver in approvers:
        if approver == decided_by:
            continue
        verdict = await ask_policy(policy, call, approver, "approve")
        if verdict is not None:
            refused[approver] = verdict[0]
    if not refused:
        return pending, approvers
    updated = await _discount(rt, found, refused)
    return updated, [a for a in approvers if a not in refused]


async def _discount(rt: Runtime, found: Found, refused: dict[str, str]) -> PendingCallState:
    """Write the discount into the snapshot (version-checked, retried over a changed run)."""
    record, state, pending = found.record, found.state, found.pending
    updated = pending.model_copy(update={"discounted": [*pending.discounted, *refused]})
    for _ in range(_ATTEMPTS):
        target = next((p for p in state.pending if p.claim_key == pending.claim_key), None)
        if target is None:  # decided meanwhile: the claim will say so
            return updated
        updated = target.model_copy(update={"discounted": [*target.discounted, *refused]})
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
        snapshot = SnapshotRecord(
            run_id=state.run_id,
            agent_id=state.agent_id,
            thread_id=state.thread_id,
            resource_id=state.resource_id,
            suspended_at=record.suspended_at,
            version=record.version + 1,
            data=changed.to_document(),
            decidable=True,
        )
        try:
            await rt.storage.commit(StateChange(snapshot=snapshot, audit=[audit]))
            return updated
        except SnapshotVersionConflict:
            fresh = await rt.storage.load_snapshot(state.run_id)
            if fresh is None:
                return updated
            record, state = fresh, RunState.model_validate(fresh.data)
    return updated
