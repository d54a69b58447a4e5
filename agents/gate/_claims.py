"""THE claim: a decided call taken exactly once, with its audit (and a grant it creates) in one
transaction; nothing is written when someone was first (``AlreadyDecided``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents._runtime import Runtime
from agents.decisions import Decision
from agents.gate._found import already_decided
from agents.observing._observe import DecisionTaken, notify
from agents.stored._state import PendingCallState, RunState
from storage import AuditEvent, ClaimRecord, GrantRecord, StateChange, utcnow

CLAIMED_AS: dict[str, str] = {
    "approve": "approved",
    "decline": "declined",
    "expire": "expired",
    "resume": "resumed",
}
"""The decision stored with the claim, per ``Decision.kind``."""


async def claim(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    decision: Decision,
    *,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
    grant: GrantRecord | None = None,
) -> ClaimRecord:
    """THE claim of a decision: atomically take the call, then audit it; returns the claim
    (held by this process at lease epoch 0, which every write for its work carries).

    Every check that must hold for a decision belongs here, inside the claim. The loser of a
    race gets ``AlreadyDecided`` (``ApprovalExpired`` when the call expired first).
    ``source`` (button, API, expiry sweep...) is recorded, never interpreted. ``grant``: a
    standing grant the approval creates, stored in the same transaction (SPEC 15).
    """
    record, decided = leased_claim(
        rt,
        state,
        pending,
        CLAIMED_AS[decision.kind],
        decided_by=decided_by,
        source=source,
        detail=detail,
    )
    await _take(rt, record, audit=[decided], grant=grant)
    return record


def leased_claim(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    decision: str,
    *,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
) -> tuple[ClaimRecord, AuditEvent]:
    """The claim of ``pending`` as ``decision``, held by this process under a fresh lease,
    and its ``decided`` audit event: what every decision writes (alone, in a batch, by a
    grant)."""
    now = utcnow()
    record = decided_claim(
        state,
        pending,
        decision,
        decided_by=decided_by,
        decided_at=now,
        detail={"source": source, **detail},
        owner=rt.owner,
        lease_until=now + timedelta(seconds=rt.claim_lease_seconds),
    )
    return record, decided_event(
        rt, state, pending, decision, decided_by, source or "python", detail
    )


def decided_claim(
    state: RunState, pending: PendingCallState, decision: str, **fields: Any
) -> ClaimRecord:
    """The claim of ``pending``'s round as ``decision``, with the other ``ClaimRecord`` fields."""
    return ClaimRecord(
        run_id=state.run_id,
        key=pending.claim_key,
        tool_call_id=pending.tool_call_id,
        decision=decision,
        **fields,
    )


def decided_event(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    decision: str,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
) -> AuditEvent:
    """The ``decided`` audit event of ``pending`` claimed as ``decision``."""
    return rt.audit_event(
        "decided",
        state,
        tool_call_id=pending.tool_call_id,
        actor=decided_by,
        source=source,
        data={
            "decision": decision,
            "tool_name": pending.tool_name,
            "fingerprint": pending.fingerprint,
            "agent_path": pending.agent_path,
            **detail,
        },
    )


async def claim_retry(rt: Runtime, state: RunState, decided_by: str | None) -> None:
    """Take the single-use right to retry a failed run at its current step."""
    now = utcnow()
    await _take(
        rt,
        ClaimRecord(
            run_id=state.run_id,
            key=f"retry#{state.steps}",
            tool_call_id=None,
            decision="retried",
            decided_by=decided_by,
            decided_at=now,
            owner=rt.owner,
            lease_until=now + timedelta(seconds=rt.claim_lease_seconds),
        ),
    )


async def _take(
    rt: Runtime,
    record: ClaimRecord,
    audit: list[AuditEvent] | None = None,
    grant: GrantRecord | None = None,
) -> None:
    """The claim, its audit (and a grant it creates) in one transaction; nothing is written
    when someone was first."""
    existing = await rt.storage.commit(StateChange(claim=record, audit=audit or [], grant=grant))
    if existing is not None:
        raise already_decided(existing)


def report_decision(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    decision: str,
    source: str,
    outcome: str | None = None,
) -> None:
    """Tell the observers (metrics) that ``pending`` was claimed as ``decision`` from
    ``source`` (once, at the level the person decided on; ``outcome``: ``granted``,
    ``withdrawn``)."""
    if not rt.observers:
        return
    notify(
        rt.observers,
        DecisionTaken(
            agent_id=rt.id,
            run_id=state.run_id,
            tool_call_id=pending.tool_call_id,
            tool_name=pending.tool_name,
            decision=decision,  # type: ignore[arg-type]
            source=source,
            waited_seconds=max(0.0, (utcnow() - pending.suspended_at).total_seconds()),
            outcome=outcome,  # type: ignore[arg-type]
        ),
    )
