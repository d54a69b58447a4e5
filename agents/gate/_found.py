"""Finding the pending call a decision is about: the run read once (its snapshot with its claims,
approvals and escalation steps), the call selected and checked against what the decider saw.

Every refusal that needs no rule is raised here: no such run (``SnapshotNotFound``), no such
call or of the other kind (``ToolCallNotSuspended``), decided already (``AlreadyDecided``,
``ApprovalExpired``), other arguments than shown (``FingerprintMismatch``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from agents.stored._state import PendingCallState, RunState
from storage import ApprovalRecord, ClaimRecord, EscalationRecord, SnapshotRecord

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
