"""Crash recovery: calls that were claimed but whose work never finished.

A claimed call is never silently run twice. When the process that claimed it died:
an ``idempotent=True`` tool is run again with the same ``idempotency_key``; any other is
reported ``interrupted`` (the model and the humans are told the outcome is unknown);
a decline or a resume of a call that was never started is simply applied.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from agents._deciding import continue_run
from agents._executor import outcome_of_sub_run
from agents._outcome import Outcome
from agents._state import PendingCallState, RunState
from agents._stream import AgentStream
from storage import ClaimRecord, utcnow

if TYPE_CHECKING:
    from agents._agent import Agent


async def recover_interrupted_runs(agent: Agent, older_than_seconds: float) -> list[AgentStream]:
    """Finish every claimed-but-unfinished call of ``agent`` claimed before the cutoff."""
    cutoff = utcnow() - timedelta(seconds=older_than_seconds)
    streams: list[AgentStream] = []
    for claim in await agent.storage.list_unfinished_claims(cutoff):
        stream = await recover_claim(agent, claim)
        if stream is not None:
            streams.append(stream)
    handled = {s.run_id for s in streams}
    streams.extend(await _apply_finished_claims(agent, skip=handled))
    return streams


async def recover_claim(agent: Agent, claim: ClaimRecord) -> AgentStream | None:
    """Continue the run of one unfinished claim, or None when it is not this agent's."""
    record = await agent.storage.load_snapshot(claim.run_id)
    if record is None or record.agent_id != agent.id:
        return None
    state = RunState.model_validate(record.data)
    pending = next((p for p in state.pending if p.claim_key == claim.key), None)
    if pending is None:
        return None
    await agent._executor.audit(
        "recovered", state, tool_call_id=pending.tool_call_id, data={"decision": claim.decision}
    )

    async def outcome() -> Outcome:
        return await _recovered_outcome(agent, state, pending, claim)

    return continue_run(agent, record.version, state, pending, outcome)


async def _recovered_outcome(
    agent: Agent, state: RunState, pending: PendingCallState, claim: ClaimRecord
) -> Outcome:
    if claim.decision in ("declined", "expired"):
        return Outcome.denied(claim.detail.get("reason"))
    if pending.delegate is not None:
        sub = agent._delegate_for(pending.local_tool)
        if sub is None:
            return Outcome.interrupted()
        inner_claims = await sub.storage.list_claims(pending.delegate.run_id)
        inner = next(
            (
                c
                for c in reversed(inner_claims)
                if c.tool_call_id == pending.delegate.tool_call_id and c.status == "claimed"
            ),
            None,
        )
        stream = await recover_claim(sub, inner) if inner is not None else None
        return await outcome_of_sub_run(stream) if stream is not None else Outcome.interrupted()
    tool = agent._tools.get(pending.local_tool)
    if tool is None or not tool.idempotent:
        return Outcome.interrupted()
    args: dict[str, Any] = claim.detail.get("args") or pending.local_args
    resume_data: Any = None
    if claim.decision == "resumed":
        resume_data = tool.parse_resume(claim.detail.get("resume_data"))
        args = pending.local_args
    return await agent._executor.execute(
        state,
        pending.call_id,
        pending.local_tool,
        args,
        resume_data=resume_data,
        suspend_payload=pending.suspend_payload,
    )


async def _apply_finished_claims(agent: Agent, *, skip: set[str]) -> list[AgentStream]:
    """Runs whose claim completed but whose snapshot was not updated before a crash."""
    streams: list[AgentStream] = []
    records, _ = await agent.storage.list_snapshots(agent_id=agent.id)
    for record in records:
        if record.run_id in skip:
            continue
        claims = {c.key: c for c in await agent.storage.list_claims(record.run_id)}
        state = RunState.model_validate(record.data)
        for pending in state.pending:
            claim = claims.get(pending.claim_key)
            if claim is not None and claim.status == "completed" and claim.outcome is not None:
                done = Outcome.from_document(claim.outcome)

                async def outcome(done: Outcome = done) -> Outcome:
                    return done

                streams.append(continue_run(agent, record.version, state, pending, outcome))
                break
    return streams
