"""Finding the pending call a decision is about, and claiming it exactly once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from agents._outcome import Outcome
from agents._state import PendingCallState, RunState
from agents.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from storage import ClaimRecord, SnapshotRecord, utcnow

if TYPE_CHECKING:
    from agents._agent import Agent

Kind = Literal["approval", "suspension"]


class Decisions:
    """Loads runs, selects pending calls, claims them, records their outcome."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    async def find(
        self, run_id: str, tool_call_id: str | None, kind: Kind, fingerprint: str | None = None
    ) -> tuple[SnapshotRecord, RunState, PendingCallState]:
        """The stored run and the pending call a decision of ``kind`` is about (checked)."""
        record, state = await self.load(run_id, tool_call_id)
        pending = await self.select(state, tool_call_id, kind)
        self.check_fingerprint(state, pending, fingerprint)
        return record, state, pending

    async def load(self, run_id: str, tool_call_id: str | None) -> tuple[SnapshotRecord, RunState]:
        """The stored run, or the right error when there is none."""
        record = await self.agent.storage.load_snapshot(run_id)
        if record is None:
            claims = await self.agent.storage.list_claims(run_id)
            matching = [c for c in claims if tool_call_id in (None, c.tool_call_id)]
            if matching:
                raise _already_decided(matching[-1])
            raise SnapshotNotFound(run_id)
        return record, RunState.model_validate(record.data)

    async def select(
        self, state: RunState, tool_call_id: str | None, kind: Kind
    ) -> PendingCallState:
        """The call to decide: the named one, or the most recent undecided one."""
        claims = {c.key: c for c in await self.agent.storage.list_claims(state.run_id)}
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

    @staticmethod
    def check_fingerprint(state: RunState, pending: PendingCallState, given: str | None) -> None:
        if given is not None and given != pending.fingerprint:
            raise FingerprintMismatch(
                state.run_id, pending.tool_call_id, pending.fingerprint, given
            )

    async def claim(
        self,
        state: RunState,
        pending: PendingCallState,
        decision: str,
        decided_by: str | None,
        detail: dict[str, Any],
    ) -> None:
        """Atomically take the decision; the loser gets ``AlreadyDecided``."""
        claim = ClaimRecord(
            run_id=state.run_id,
            key=pending.claim_key,
            tool_call_id=pending.tool_call_id,
            decision=decision,
            decided_by=decided_by,
            decided_at=utcnow(),
            detail=detail,
        )
        existing = await self.agent.storage.claim(claim)
        if existing is not None:
            raise _already_decided(existing)
        await self.agent._executor.audit(
            "decided",
            state,
            tool_call_id=pending.tool_call_id,
            actor=decided_by,
            source=str(detail.get("source") or "python"),
            data={
                "decision": decision,
                "tool_name": pending.tool_name,
                "fingerprint": pending.fingerprint,
                "agent_path": pending.agent_path,
                **{k: v for k, v in detail.items() if k != "source"},
            },
        )

    async def complete(self, state: RunState, pending: PendingCallState, outcome: Outcome) -> None:
        """Record what the decided call produced (before the snapshot is updated)."""
        await self.agent.storage.complete_claim(
            state.run_id, pending.claim_key, outcome.to_document()
        )
        if outcome.terminal:
            await self.agent._executor.audit(
                "executed" if outcome.status != "denied" else "not-executed",
                state,
                tool_call_id=pending.tool_call_id,
                data={
                    "tool_name": pending.tool_name,
                    "status": outcome.status,
                    "args_fingerprint": pending.fingerprint,
                },
            )


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
