"""Extend (SPEC 12, round 4): a pending approval kept decidable for longer by someone who may
approve it. Its ``expires_at`` moves by the rule's TTL once more (``expires_at + ttl_seconds``),
never past ``suspended_at + max_ttl_seconds`` (the rule's maximum), and the move is audited
(``extended``).

Who may extend is who may approve: the gate's own expiry and authority gates are asked about an
``Approve`` of the call under the rule in force (``not_expired``, ``may_decide``), no second
rule. The move is one version-checked transaction (the snapshot with the new ``expires_at`` and
the run's due moment, which the sweep reads, and the audit): of two extends racing from any
instances one writes first, the other reads the run again and moves it only as far as the rule
still allows, else ``CannotExtend``. A call decided or expired first is refused as a decision
is (``AlreadyDecided`` / ``ApprovalExpired``); a decision racing an extend is unaffected (the
claim is the truth; a run that moves on reads its snapshot again).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.decisions import Approve, DecisionRequest
from agents.errors import CannotExtend
from agents.gate import Case, Found, find, in_force, may_decide, not_expired
from agents.stored._state import PendingCallState, still_waiting
from storage import SnapshotVersionConflict, StateChange

_ATTEMPTS = 5
"""How often an extend reads its run again when the run changed while it was writing."""

NO_EXPIRY = "it never expires"
NOT_EXTENDABLE = "its rule allows no extension (no max_ttl_seconds above its ttl_seconds)"


async def extend(
    rt: Runtime, *, run_id: str, tool_call_id: str | None, by: str | None, source: str
) -> PendingToolCall:
    """Move the call's ``expires_at`` by its rule's TTL, as far as the rule allows; the call as
    it now stands.

    Raises what a decision would (``SnapshotNotFound``, ``ToolCallNotSuspended``,
    ``AlreadyDecided``, ``ApprovalExpired``, ``NotAllowedToDecide``) and ``CannotExtend``.
    """
    conflict: SnapshotVersionConflict | None = None
    for _ in range(_ATTEMPTS):
        found = await find(rt, run_id, tool_call_id, "approval", None)
        request = DecisionRequest(
            run_id=run_id, tool_call_id=found.pending.tool_call_id, decided_by=by, source=source
        )
        case = Case(rt=rt, found=found, decision=Approve(), request=request, tool=None)
        case = await may_decide(await not_expired(case))
        moved = found.pending.model_copy(update={"expires_at": extended_until(found)})
        try:
            await rt.storage.commit(_change(rt, found, moved, by, source))
        except SnapshotVersionConflict as exc:
            conflict = exc
            continue
        return in_force(rt, moved.public(found.approved_by, found.escalations))
    assert conflict is not None
    raise conflict


def extended_until(found: Found) -> datetime:
    """Where an extend moves the found call's ``expires_at`` (``CannotExtend`` when its rule
    allows no move from where it is)."""
    pending = found.pending
    rule = pending.requirement
    ttl, most = rule.ttl_seconds, rule.max_ttl_seconds
    if pending.expires_at is None or ttl is None:
        raise _refused(found, NO_EXPIRY)
    if most is None or most <= ttl:
        raise _refused(found, NOT_EXTENDABLE)
    cap = pending.suspended_at + timedelta(seconds=most)
    until = min(pending.expires_at + timedelta(seconds=ttl), cap)
    if until <= pending.expires_at:
        raise _refused(
            found,
            f"it expires at {pending.expires_at.isoformat()} already, the most its rule allows "
            f"({_hours(most)} after it was presented)",
        )
    return until


def _change(
    rt: Runtime, found: Found, moved: PendingCallState, by: str | None, source: str
) -> StateChange:
    """The snapshot with ``moved`` (and the run's due moment), and its ``extended`` audit."""
    record, state, shown = found.record, found.state, found.pending
    changed = state.model_copy(
        update={"pending": [moved if p.claim_key == shown.claim_key else p for p in state.pending]}
    )
    snapshot = still_waiting(record, changed)
    assert shown.expires_at is not None and moved.expires_at is not None
    audit = rt.audit_event(
        "extended",
        state,
        tool_call_id=shown.tool_call_id,
        actor=by,
        source=source,
        data={
            "tool_name": shown.tool_name,
            "fingerprint": shown.fingerprint,
            "expires_at": moved.expires_at.isoformat(),
            "previous_expires_at": shown.expires_at.isoformat(),
        },
    )
    return StateChange(snapshot=snapshot, audit=[audit])


def _refused(found: Found, reason: str) -> CannotExtend:
    return CannotExtend(found.state.run_id, found.pending.tool_call_id, reason=reason)


def _hours(seconds: float) -> str:
    """``5400`` → ``"1.5 h"``; under an hour in minutes, under a minute in seconds."""
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    if seconds >= 60:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
