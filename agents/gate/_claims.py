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
    record = decided_claim(
        state,
        pending,
        decision,
        decided_by=decided_by,
        source=source,
        detail=detail,
        **held_by(rt),
    )
    return record, decided_event(rt, state, pending, record)


def decided_claim(
    state: RunState,
    pending: PendingCallState,
    decision: str,
    *,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
    **fields: Any,
) -> ClaimRecord:
    """The claim of ``pending``'s round as ``decision`` by ``decided_by`` from ``source``,
    decided now, with the other ``ClaimRecord`` fields (a lease: ``held_by``)."""
    return ClaimRecord(
        run_id=state.run_id,
        key=pending.claim_key,
        tool_call_id=pending.tool_call_id,
        decision=decision,
        decided_by=decided_by,
        decided_at=fields.pop("decided_at", None) or utcnow(),
        detail={"source": source, **detail},
        **fields,
    )


def held_by(rt: Runtime) -> dict[str, Any]:
    """The fields of a claim this process holds from now, under a fresh lease."""
    now = utcnow()
    return {
        "decided_at": now,
        "owner": rt.owner,
        "lease_until": now + timedelta(seconds=rt.claim_lease_seconds),
    }


def decided_event(
    rt: Runtime, state: RunState, pending: PendingCallState, claim: ClaimRecord
) -> AuditEvent:
    """The ``decided`` audit event of ``pending`` taken as ``claim`` (who, how, what)."""
    detail = {key: value for key, value in claim.detail.items() if key != "source"}
    return rt.audit_event(
        "decided",
        state,
        tool_call_id=pending.tool_call_id,
        actor=claim.decided_by,
        source=str(claim.detail.get("source") or "python"),
        data={
            "decision": claim.decision,
            "tool_name": pending.tool_name,
            "fingerprint": pending.fingerprint,
            "agent_path": pending.agent_path,
            **detail,
        },
    )


async def claim_retry(rt: Runtime, state: RunState, decided_by: str | None) -> None:
    """Take the single-use right to retry a failed run at its current step."""
    key = f"retry#{state.steps}"
    retried = ClaimRecord(
        run_id=state.run_id,
        key=key,
        tool_call_id=None,
        decision="retried",
        decided_by=decided_by,
        **held_by(rt),
    )
    await _take(rt, retried)


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
