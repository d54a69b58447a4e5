"""Finding the pending call a decision is about, and claiming it exactly once (one place).

``find`` reads the run, its claims, approvals and escalation steps in one round trip;
``guard`` checks what the stored call says against the decision (expiry, who may decide,
quorum); ``claim`` takes it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.deciding._state import PendingCallState, RunState
from agents.decisions import (
    ASKS_WITHOUT_DECIDER,
    Approve,
    Decision,
    Decline,
    Expire,
    PolicyKind,
    ask_policy,
)
from agents.errors import (
    NOT_REQUESTER_RULE,
    AgentConfigError,
    AlreadyDecided,
    ApprovalExpired,
    DuplicateApproval,
    FingerprintMismatch,
    NotAllowedToDecide,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from storage import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    EscalationRecord,
    GrantRecord,
    SnapshotRecord,
    StateChange,
    utcnow,
)

Kind = Literal["approval", "suspension"]
"""What a pending call waits for."""

CLAIMED_AS: dict[str, str] = {
    "approve": "approved",
    "decline": "declined",
    "expire": "expired",
    "resume": "resumed",
}
"""The decision stored with the claim, per ``Decision.kind``."""


@dataclass(frozen=True, kw_only=True)
class Found:
    """A stored run and the pending call a decision is about."""

    record: SnapshotRecord
    state: RunState
    pending: PendingCallState
    approved_by: list[str]
    """Who counts as having approved the call so far (quorum: ``PendingCallState.counted``)."""
    escalations: list[EscalationRecord] = field(default_factory=list)
    """The escalation steps of the run (those of the call's claim key count: SPEC 15)."""

    def call(self, approved_by: list[str] | None = None) -> PendingToolCall:
        """The call as the decision policy sees it (``approved_by``: these approvers instead)."""
        approvers = self.approved_by if approved_by is None else approved_by
        return self.pending.public(approvers, self.escalations)


async def find(
    rt: Runtime, run_id: str, tool_call_id: str | None, kind: Kind, fingerprint: str | None
) -> Found:
    """The stored run and the pending call a decision of ``kind`` is about (checked)."""
    loaded = await rt.storage.load_run_and_escalations(run_id)
    return found_in(run_id, loaded, tool_call_id, kind, fingerprint)


def found_in(
    run_id: str,
    loaded: tuple[
        SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord], list[EscalationRecord]
    ],
    tool_call_id: str | None,
    kind: Kind,
    fingerprint: str | None,
) -> Found:
    """``find`` on a run already read (``Storage.load_run_and_escalations``): one read for
    several calls."""
    record, claims, approvals, escalated = loaded
    if record is None:
        matching = [c for c in _of_calls(claims) if tool_call_id in (None, c.tool_call_id)]
        if matching:
            raise already_decided(matching[-1])
        raise SnapshotNotFound(run_id)
    state = RunState.model_validate(record.data)
    pending = _select(state, {c.key: c for c in claims}, tool_call_id, kind)
    if fingerprint is not None and fingerprint != pending.fingerprint:
        raise FingerprintMismatch(
            state.run_id, pending.tool_call_id, pending.fingerprint, fingerprint
        )
    approved_by = pending.counted([a.approver for a in approvals if a.key == pending.claim_key])
    return Found(
        record=record,
        state=state,
        pending=pending,
        approved_by=approved_by,
        escalations=escalated,
    )


async def guard(rt: Runtime, found: Found, decision: Decision, decided_by: str | None) -> None:
    """What the stored call says about this decision, checked before the claim.

    Expiry (``expires_at``), then who may decide (the decision policy, when ``decided_by`` is
    given), then the quorum's own rules. ``Expire`` is the system's and only meets expiry's
    opposite: nothing stops a call from being expired.
    """
    pending, state = found.pending, found.state
    if isinstance(decision, Expire):
        return
    if pending.expires_at is not None and utcnow() >= pending.expires_at:
        raise ApprovalExpired(state.run_id, pending.tool_call_id, decided_at=pending.expires_at)
    if isinstance(decision, Decline) and decision.withdrawn:
        _may_withdraw(found, decided_by)
        return  # every policy allows the requester to take back their own call
    if rt.decision_policy is not None and (decided_by is not None or _asks_anyone(rt)):
        kind: PolicyKind = decision.kind
        refused = await _policy_verdict(rt, found, decided_by, kind)
        if refused is not None:
            rule, reason = refused
            raise NotAllowedToDecide(
                state.run_id, pending.tool_call_id, decided_by=decided_by, reason=reason, rule=rule
            )
    if isinstance(decision, Approve) and pending.approvals_required > 1:
        if decided_by is None:
            raise AgentConfigError(
                f"tool call {pending.tool_call_id!r} needs {pending.approvals_required} "
                "different approvers: pass decided_by= with each approval"
            )
        if decision.args is None and decided_by in found.approved_by:
            raise DuplicateApproval(
                state.run_id,
                pending.tool_call_id,
                approver=decided_by,
                approved_by=found.approved_by,
                needed=pending.approvals_required,
            )


def _may_withdraw(found: Found, decided_by: str | None) -> None:
    """Only the call's requester withdraws it."""
    requester = found.pending.requested_by
    if decided_by is None or requester is None or decided_by != requester:
        raise NotAllowedToDecide(
            found.state.run_id,
            found.pending.tool_call_id,
            decided_by=decided_by,
            reason="only the person who asked for this call may withdraw it",
            rule=NOT_REQUESTER_RULE,
        )


def _asks_anyone(rt: Runtime) -> bool:
    """Whether the policy is asked about decisions that name no person, too."""
    return getattr(rt.decision_policy, ASKS_WITHOUT_DECIDER, False) is True


async def _policy_verdict(
    rt: Runtime, found: Found, decided_by: str | None, kind: PolicyKind
) -> tuple[str, str] | None:
    """None when the policy allows; else the refusing rule's name and why."""
    assert rt.decision_policy is not None
    call = found.call()
    return await ask_policy(rt.decision_policy, call, decided_by, kind)


async def add_approval(rt: Runtime, found: Found, decided_by: str) -> list[str]:
    """Record one approver of a quorum call atomically; returns every approver so far.

    Raises ``DuplicateApproval`` for the same person twice and ``AlreadyDecided`` when the
    call was claimed meanwhile (declined, expired, or approved by the N-th approver).
    """
    pending, state = found.pending, found.state
    tally = await rt.storage.add_approval(
        ApprovalRecord(
            run_id=state.run_id, key=pending.claim_key, approver=decided_by, approved_at=utcnow()
        )
    )
    if tally.claim is not None:
        raise already_decided(tally.claim)
    approvers = [a.approver for a in tally.approvals]
    if not tally.added:
        raise DuplicateApproval(
            state.run_id,
            pending.tool_call_id,
            approver=decided_by,
            approved_by=approvers,
            needed=pending.approvals_required,
        )
    await rt.audit(
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
    return approvers


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
    verdict = CLAIMED_AS[decision.kind]
    now = utcnow()
    record = decided_claim(
        state,
        pending,
        verdict,
        decided_by=decided_by,
        decided_at=now,
        detail={"source": source, **detail},
        owner=rt.owner,
        lease_until=now + timedelta(seconds=rt.claim_lease_seconds),
    )
    decided = decided_event(rt, state, pending, verdict, decided_by, source or "python", detail)
    await _take(rt, record, audit=[decided], grant=grant)
    return record


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


def _select(
    state: RunState, claims: dict[str, ClaimRecord], tool_call_id: str | None, kind: Kind
) -> PendingCallState:
    """The call to decide: the named one, or the most recent undecided one."""
    if tool_call_id is None:
        undecided = [p for p in state.pending if p.claim_key not in claims]
        if not undecided:
            decided = _of_calls(claims.values())
            if decided:
                raise already_decided(max(decided, key=lambda c: c.decided_at))
            raise ToolCallNotSuspended(
                state.run_id, None, f"run {state.run_id!r} has no pending tool call"
            )
        pending = max(undecided, key=lambda p: p.suspended_at)
    else:
        found = next((p for p in state.pending if p.tool_call_id == tool_call_id), None)
        if found is None:
            earlier = [c for c in claims.values() if c.tool_call_id == tool_call_id]
            if earlier:
                raise already_decided(max(earlier, key=lambda c: c.decided_at))
            raise ToolCallNotSuspended(state.run_id, tool_call_id)
        pending = found
        if pending.claim_key in claims:
            raise already_decided(claims[pending.claim_key])
    if pending.kind != kind:
        raise ToolCallNotSuspended(state.run_id, pending.tool_call_id, _wrong_kind(pending))
    return pending


def _of_calls(claims: Iterable[ClaimRecord]) -> list[ClaimRecord]:
    """The decisions on calls (not the claims that lease a run's retry or its answer)."""
    return [c for c in claims if c.tool_call_id is not None]


def already_decided(claim: ClaimRecord) -> AlreadyDecided:
    if claim.decision == "expired":
        return ApprovalExpired(claim.run_id, claim.tool_call_id, decided_at=claim.decided_at)
    return AlreadyDecided(
        claim.run_id,
        claim.tool_call_id,
        decision=claim.decision,
        decided_by=claim.decided_by,
        decided_at=claim.decided_at,
    )


def _wrong_kind(pending: PendingCallState) -> str:
    if pending.kind == "approval":
        return (
            f"tool call {pending.tool_call_id!r} waits for approval, not for data: decide it "
            "with approve_tool_call() or decline_tool_call()"
        )
    return (
        f"tool call {pending.tool_call_id!r} waits for data (it called suspend()), not for "
        "approval: resume it with resume_stream(resume_data, ...)"
    )
