"""The decision methods' bodies: check, claim, then continue the run in the background.

Everything that can refuse a decision (unknown run, wrong call, fingerprint, invalid edited
args or resume data, a decision already taken) raises BEFORE the returned stream exists.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agents._config import json_safe, validation_errors
from agents._executor import outcome_of_sub_run
from agents._outcome import Outcome
from agents._run import Run
from agents._state import PendingCallState, RunState
from agents._stream import AgentStream
from agents.errors import (
    AlreadyDecided,
    InvalidResumeData,
    InvalidToolArgs,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from storage import ClaimRecord, utcnow
from tools import ToolInputError

if TYPE_CHECKING:
    from agents._agent import Agent

OutcomeFn = Callable[[], Awaitable[Outcome]]
Forward = Callable[["Agent", str, str], Awaitable[AgentStream]]
"""Make the same decision on a sub-agent: ``(sub, inner_run_id, inner_tool_call_id)``."""


async def approve(
    agent: Agent,
    *,
    run_id: str,
    tool_call_id: str | None,
    args: dict[str, Any] | None,
    fingerprint: str | None,
    decided_by: str | None,
    source: str,
) -> AgentStream:
    record, state, pending = await agent._decisions.find(
        run_id, tool_call_id, "approval", fingerprint
    )
    run_args = pending.args if args is None else _validated_args(agent, pending, args)
    detail: dict[str, Any] = {"source": source}
    if args is not None:
        detail.update(edited=True, original_args=pending.args, args=run_args)
    await agent._decisions.claim(state, pending, "approved", decided_by, detail)

    def forward(sub: Agent, inner_run: str, inner_call: str) -> Awaitable[AgentStream]:
        return sub.approve_tool_call(
            run_id=inner_run,
            tool_call_id=inner_call,
            args=args,
            decided_by=decided_by,
            source=source,
        )

    def local() -> Awaitable[Outcome]:
        return agent._executor.execute(state, pending.call_id, pending.local_tool, run_args)

    return continue_run(
        agent, record.version, state, pending, _outcome(agent, pending, local, forward)
    )


async def decline(
    agent: Agent,
    *,
    run_id: str,
    tool_call_id: str | None,
    reason: str | None,
    fingerprint: str | None,
    decided_by: str | None,
    source: str,
) -> AgentStream:
    record, state, pending = await agent._decisions.find(
        run_id, tool_call_id, "approval", fingerprint
    )
    decision = "expired" if source == "expiry" else "declined"
    await agent._decisions.claim(
        state, pending, decision, decided_by, {"source": source, "reason": reason}
    )

    def forward(sub: Agent, inner_run: str, inner_call: str) -> Awaitable[AgentStream]:
        return sub.decline_tool_call(
            run_id=inner_run,
            tool_call_id=inner_call,
            reason=reason,
            decided_by=decided_by,
            source=source,
        )

    async def local() -> Outcome:
        return Outcome.denied(reason)

    return continue_run(
        agent, record.version, state, pending, _outcome(agent, pending, local, forward)
    )


async def resume(
    agent: Agent,
    resume_data: Any,
    *,
    run_id: str,
    tool_call_id: str | None,
    decided_by: str | None,
    source: str,
) -> AgentStream:
    record, state, pending = await agent._decisions.find(run_id, tool_call_id, "suspension")
    tool = agent._find_tool(pending.agent_path, pending.tool_name)
    parsed: Any = resume_data
    if tool is not None and tool.resume_schema is not None:
        try:
            parsed = tool.parse_resume(resume_data)
        except ValidationError as exc:
            raise InvalidResumeData(pending.tool_call_id, validation_errors(exc)) from None
    detail = {"source": source, "resume_data": json_safe(resume_data)}
    await agent._decisions.claim(state, pending, "resumed", decided_by, detail)

    def forward(sub: Agent, inner_run: str, inner_call: str) -> Awaitable[AgentStream]:
        return sub.resume_stream(
            resume_data,
            run_id=inner_run,
            tool_call_id=inner_call,
            decided_by=decided_by,
            source=source,
        )

    def local() -> Awaitable[Outcome]:
        return agent._executor.execute(
            state,
            pending.call_id,
            pending.local_tool,
            pending.local_args,
            resume_data=parsed,
            suspend_payload=pending.suspend_payload,
        )

    return continue_run(
        agent, record.version, state, pending, _outcome(agent, pending, local, forward)
    )


async def retry(agent: Agent, *, run_id: str, decided_by: str | None) -> AgentStream:
    record = await agent.storage.load_snapshot(run_id)
    if record is None:
        raise SnapshotNotFound(run_id)
    state = RunState.model_validate(record.data)
    if state.error is None or state.pending:
        raise ToolCallNotSuspended(
            run_id, None, f"run {run_id!r} did not fail; decide its pending calls instead"
        )
    claim = ClaimRecord(
        run_id=run_id,
        key=f"retry#{state.steps}",
        tool_call_id=None,
        decision="retried",
        decided_by=decided_by,
        decided_at=utcnow(),
    )
    existing = await agent.storage.claim(claim)
    if existing is not None:
        raise AlreadyDecided(
            run_id,
            None,
            decision=existing.decision,
            decided_by=existing.decided_by,
            decided_at=existing.decided_at,
        )
    state.error = None
    stream = AgentStream(run_id)
    run = Run(agent, state, stream, version=record.version)
    agent._tasks.start(run.retry(), name=f"run-{run_id}")
    return stream


def continue_run(
    agent: Agent, version: int, state: RunState, pending: PendingCallState, outcome: OutcomeFn
) -> AgentStream:
    """Start the rest of the run (the decided call's outcome, then the loop) in the background."""
    stream = AgentStream(state.run_id)
    run = Run(agent, state, stream, version=version)
    agent._tasks.start(run.finish_decided(pending, outcome), name=f"run-{state.run_id}")
    return stream


def _outcome(
    agent: Agent, pending: PendingCallState, local: OutcomeFn, forward: Forward
) -> OutcomeFn:
    """The call's outcome: run it here, or hand the decision down to the sub-agent holding it."""

    async def outcome() -> Outcome:
        if pending.delegate is None:
            return await local()
        sub = agent._delegate_for(pending.local_tool)
        if sub is None:
            return Outcome.error(f"sub-agent for {pending.local_tool!r} is no longer configured")
        inner = await forward(sub, pending.delegate.run_id, pending.delegate.tool_call_id)
        return await outcome_of_sub_run(inner)

    return outcome


def _validated_args(
    agent: Agent, pending: PendingCallState, args: dict[str, Any]
) -> dict[str, Any]:
    tool = agent._find_tool(pending.agent_path, pending.tool_name)
    if tool is None:
        return dict(args)
    try:
        return tool.parse_input(args).model_dump(mode="json")
    except ToolInputError as exc:
        raise InvalidToolArgs(pending.tool_call_id, list(exc.errors)) from None
