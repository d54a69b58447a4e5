"""Escalating a call nobody decides (SPEC 15): one step, once across processes.

``escalate_call`` finds the call as a decision does, records the step with
``Storage.escalate`` (a compare-and-set on the step number: of several processes escalating
the same call at once, one records each step, and none once the call is claimed), audits it
(``escalated``), and returns the call as it now stands, its ``escalated_approvers`` included;
the decision policy sees them inside every later decision. The model is not called.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.observing._observe import CallEscalated
from agents.observing._observe import notify as tell_observers
from agents.stored._state import RunState
from storage import EscalationRecord


async def escalate_call(
    rt: Runtime,
    *,
    run_id: str,
    tool_call_id: str,
    step: int,
    approvers: Sequence[str],
    notify: Sequence[str],
    at: datetime,
    actor: str = "system",
) -> PendingToolCall | None:
    """Record escalation ``step`` (1 for the first) of a pending approval; the call with it
    when this process recorded it, None when the call no longer waits for approval or the
    step was recorded already (by this process or another one)."""
    record, claims, approvals, escalated = await rt.storage.load_run_and_escalations(run_id)
    if record is None or record.agent_id != rt.id:
        return None
    claimed = {c.key for c in claims}
    state = RunState.model_validate(record.data)
    pending = next(
        (
            p
            for p in state.pending
            if p.tool_call_id == tool_call_id and p.kind == "approval"
            if p.claim_key not in claimed
        ),
        None,
    )
    if pending is None:
        return None
    done = EscalationRecord(
        run_id=run_id,
        key=pending.claim_key,
        step=step,
        approvers=list(approvers),
        notify=list(notify),
        escalated_at=at,
    )
    if not await rt.storage.escalate(done):
        return None
    await rt.audit(
        "escalated",
        state,
        tool_call_id=tool_call_id,
        actor=actor,
        source="escalation",
        data={
            "tool_name": pending.tool_name,
            "fingerprint": pending.fingerprint,
            "step": step,
            "notify": list(notify),
            "approvers": list(approvers),
        },
    )
    if rt.observers:
        tell_observers(
            rt.observers,
            CallEscalated(
                agent_id=rt.id,
                run_id=run_id,
                tool_call_id=tool_call_id,
                tool_name=pending.tool_name,
                step=step,
            ),
        )
    approved_by = [a.approver for a in approvals if a.key == pending.claim_key]
    return pending.public(approved_by, [*escalated, done])
