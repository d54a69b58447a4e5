"""Finding the pending call a decision is about, and claiming it exactly once (one place)."""

from __future__ import annotations

from typing import Any, Literal

from agents._outcome import Outcome
from agents._runtime import Runtime
from agents._state import PendingCallState, RunState
from agents.decisions import Decision
from agents.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from storage import ClaimRecord, SnapshotRecord, utcnow

Kind = Literal["approval", "suspension"]
"""What a pending call waits for."""

CLAIMED_AS: dict[str, str] = {
    "approve": "approved",
    "decline": "declined",
    "expire": "expired",
    "resume": "resumed",
}
"""The decision stored with the claim, per ``Decision.kind``."""


async def find(
    rt: Runtime, run_id: str, tool_call_id: str | None, kind: Kind, fingerprint: str | None
) -> tuple[SnapshotRecord, RunState, PendingCallState]:
    """The stored run and the pending call a decision of ``kind`` is about (checked)."""
    record, state = await _load(rt, run_id, tool_call_id)
    pending = await _select(rt, state, tool_call_id, kind)
    if fingerprint is not None and fingerprint != pending.fingerprint:
        raise FingerprintMismatch(
            state.run_id, pending.tool_call_id, pending.fingerprint, fingerprint
        )
    return record, state, pending


async def claim(
    rt: Runtime,
    state: RunState,
    pending: PendingCallState,
    decision: Decision,
    *,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
) -> None:
    """THE claim of a decision: atomically take the call, then audit it.

    Every check that must hold for a decision belongs here, inside the claim. The loser of a
    race gets ``AlreadyDecided`` (``ApprovalExpired`` when the call expired first).
    ``source`` (button, API, expiry sweep...) is recorded, never interpreted.
    """
    verdict = CLAIMED_AS[decision.kind]
    record = ClaimRecord(
        run_id=state.run_id,
        key=pending.claim_key,
        tool_call_id=pending.tool_call_id,
        decision=verdict,
        decided_by=decided_by,
        decided_at=utcnow(),
        detail={"source": source, **detail},
    )
    await _take(rt, record)
    await rt.audit(
        "decided",
        state,
        tool_call_id=pending.tool_call_id,
        actor=decided_by,
        source=source or "python",
        data={
            "decision": verdict,
            "tool_name": pending.tool_name,
            "fingerprint": pending.fingerprint,
            "agent_path": pending.agent_path,
            **detail,
        },
    )


async def claim_retry(rt: Runtime, state: RunState, decided_by: str | None) -> None:
    """Take the single-use right to retry a failed run at its current step."""
    await _take(
        rt,
        ClaimRecord(
            run_id=state.run_id,
            key=f"retry#{state.steps}",
            tool_call_id=None,
            decision="retried",
            decided_by=decided_by,
            decided_at=utcnow(),
        ),
    )


async def complete(
    rt: Runtime, state: RunState, pending: PendingCallState, outcome: Outcome
) -> None:
    """Record what the decided call produced (before the snapshot is updated)."""
    await rt.storage.complete_claim(state.run_id, pending.claim_key, outcome.to_document())
    if outcome.terminal:
        await rt.audit(
            "executed" if outcome.status != "denied" else "not-executed",
            state,
            tool_call_id=pending.tool_call_id,
            data={
                "tool_name": pending.tool_name,
                "status": outcome.status,
                "args_fingerprint": pending.fingerprint,
            },
        )


async def _take(rt: Runtime, record: ClaimRecord) -> None:
    existing = await rt.storage.claim(record)
    if existing is not None:
        raise _already_decided(existing)


async def _load(
    rt: Runtime, run_id: str, tool_call_id: str | None
) -> tuple[SnapshotRecord, RunState]:
    """The stored run, or the right error when there is none."""
    record = await rt.storage.load_snapshot(run_id)
    if record is None:
        claims = await rt.storage.list_claims(run_id)
        matching = [c for c in claims if tool_call_id in (None, c.tool_call_id)]
        if matching:
            raise _already_decided(matching[-1])
        raise SnapshotNotFound(run_id)
    return record, RunState.model_validate(record.data)


async def _select(
    rt: Runtime, state: RunState, tool_call_id: str | None, kind: Kind
) -> PendingCallState:
    """The call to decide: the named one, or the most recent undecided one."""
    claims = {c.key: c for c in await rt.storage.list_claims(state.run_id)}
    if tool_call_id is None:
        undecided = [p for p in state.pending if p.claim_key not in claims]
        if not undecided:
            if claims:
                raise _already_decided(max(claims.values(), key=lambda c: c.decided_at))
            raise ToolCallNotSuspended(
                state.run_id, None, f"run {state.run_id!r} has no pending tool call"
            )
        pending = max(undecided, key=lambda p: p.suspended_at)
    else:
        found = next((p for p in state.pending if p.tool_call_id == tool_call_id), None)
        if found is None:
            earlier = [c for c in claims.values() if c.tool_call_id == tool_call_id]
            if earlier:
                raise _already_decided(max(earlier, key=lambda c: c.decided_at))
            raise ToolCallNotSuspended(state.run_id, tool_call_id)
        pending = found
        if pending.claim_key in claims:
            raise _already_decided(claims[pending.claim_key])
    if pending.kind != kind:
        raise ToolCallNotSuspended(state.run_id, pending.tool_call_id, _wrong_kind(pending))
    return pending


def _already_decided(claim: ClaimRecord) -> AlreadyDecided:
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
