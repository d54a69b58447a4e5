"""Presenting a pending call again: the call as shown is replaced by a new proposal of the
same call (same ``tool_call_id``, next round, approvals counting from zero).

Two gates do it (SPEC 3.3 "An approval binds what runs"): an edit that needs more than the
call as shown (``agents.gate.gates._edits``), and a tool whose definition changed since the call
was shown (``agents.gate.gates._definition``). The replacement is one transaction:
the shown round's claim key is taken (so a decision racing it on the old proposal gets
``AlreadyDecided``), completed at once as ``replaced`` (nothing of it runs, so no lease and no
recovery), the snapshot with the new proposal (version-checked) and the audit.
"""

from __future__ import annotations

from typing import Any

from agents._runtime import Runtime
from agents.gate._claims import decided_claim, decided_event
from agents.gate._found import Found, already_decided
from agents.stored._state import PendingCallState, RunState, still_waiting
from agents.stored._writes import requested_data
from storage import StateChange, utcnow

REPLACED = {"status": "replaced"}
"""The outcome stored with the claim of a round that was presented again (nothing ran)."""


def next_round(pending: PendingCallState, **changes: Any) -> PendingCallState:
    """``pending`` as a new proposal: the next round (a new claim key, so no approval of the
    shown round counts), waiting from now, with ``changes``."""
    fresh: dict[str, Any] = {
        "round": pending.round + 1,
        "suspended_at": utcnow(),
        "carried_approvals": [],
        "discounted": [],
    }
    return pending.model_copy(update={**fresh, **changes})


async def present_again(
    rt: Runtime,
    found: Found,
    proposal: PendingCallState,
    *,
    claimed_as: str,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
) -> RunState:
    """Replace the found call by ``proposal`` in one transaction; returns the stored state.

    Raises ``AlreadyDecided`` when the shown round was decided first (nothing is written) and
    ``SnapshotVersionConflict`` when the run changed meanwhile (nothing is written: find the
    call again and retry).
    """
    state, shown = found.state, found.pending
    now = utcnow()
    replaced = state.model_copy(
        update={
            "pending": [proposal if p.claim_key == shown.claim_key else p for p in state.pending]
        }
    )
    claim = decided_claim(
        state,
        shown,
        claimed_as,
        decided_by=decided_by,
        source=source,
        detail=detail,
        decided_at=now,
        status="completed",
        outcome=dict(REPLACED),
        completed_at=now,
    )
    snapshot = still_waiting(found.record, replaced, since=now)
    audit = [
        decided_event(rt, state, shown, claim),
        rt.audit_event(
            "approval-requested",
            state,
            tool_call_id=proposal.tool_call_id,
            actor=proposal.requested_by,
            data={
                **requested_data(proposal),
                "approved_by": proposal.counted(),
                "edited_from": proposal.edited_from,
                "definition_digest": proposal.definition_digest,
                "presented_again": claimed_as,
            },
        ),
    ]
    existing = await rt.storage.commit(StateChange(claim=claim, snapshot=snapshot, audit=audit))
    if existing is not None:
        raise already_decided(existing)
    return replaced
