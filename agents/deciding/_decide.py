"""``decide``: the one entry point for every decision (approve, decline, resume, expire).

find → the gate's judgement (``agents.gate``: expiry, who may decide, quorum, definition, grant,
edits) → recorded (claim + audit, an approval of a quorum, or the call presented again) →
continue the run. Everything
that can refuse a decision raises BEFORE the returned stream exists. A decision about a call
that lives in a sub-agent is forwarded as the same ``Decision`` value, and the sub-agent's run
is driven inside the supervisor's task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from agents._config import json_safe, validation_errors
from agents._results import RunResult
from agents._runtime import Runtime
from agents.decisions import (
    EXPIRED_REASON,
    WITHDRAWN_REASON,
    Approve,
    Decision,
    DecisionRequest,
    Decline,
    Expire,
    Resume,
)
from agents.errors import InvalidResumeData, SnapshotNotFound, ToolCallNotSuspended
from agents.gate import (
    CLAIMED_AS,
    Case,
    Kind,
    claim_retry,
    find,
    in_force,
    judge,
    record,
    report_decision,
    validated_args,
)
from agents.running._chunks import FinishChunk, StartChunk, announcement
from agents.running._executor import outcome_of_sub_run
from agents.running._run import OutcomeFn, Run
from agents.running._stream import AgentStream
from agents.stored._lease import Lease
from agents.stored._outcome import Outcome
from agents.stored._state import PendingCallState, RunState
from storage import EscalationRecord, SnapshotVersionConflict
from tools import Tool

_ATTEMPTS = 5
"""How often a decision reads its run again when the run changed while it was presenting a
call again (another call of the run completed in between)."""


@dataclass(frozen=True)
class Continuation:
    """A claimed decision's rest of the run: its stream, and the work that drives it."""

    stream: AgentStream
    drive: Callable[[], Coroutine[Any, Any, None]]


async def decide(rt: Runtime, request: DecisionRequest, decision: Decision) -> AgentStream:
    """Take ``decision`` (raising every refusal now) and continue the run in the background."""
    taken = await take(rt, request, decision)
    rt.runner.submit(taken.drive(), name=f"run-{request.run_id}", bounded=False)
    return taken.stream


async def take(
    rt: Runtime, request: DecisionRequest, decision: Decision, *, forwarded: bool = False
) -> Continuation:
    """Find, check, validate and claim; returns the continuation without starting it.

    ``forwarded``: a supervisor already checked and claimed this decision; the sub-agent only
    claims its own call (the guards ran once, at the level the person decided on). A run that
    changed while a call was presented again is read again (``SnapshotVersionConflict``).
    """
    for attempt in range(_ATTEMPTS):
        try:
            return await _take(rt, request, decision, forwarded=forwarded)
        except SnapshotVersionConflict:
            if attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


async def _take(
    rt: Runtime, request: DecisionRequest, decision: Decision, *, forwarded: bool
) -> Continuation:
    kind: Kind = "suspension" if isinstance(decision, Resume) else "approval"
    found = await find(rt, request.run_id, request.tool_call_id, kind, request.fingerprint)
    record_, state, pending = found.record, found.state, found.pending
    tool = rt.find_tool(pending.agent_path, pending.tool_name)
    case = Case(rt=rt, found=found, decision=decision, request=request, tool=tool)
    if not forwarded:  # a forwarded decision was judged at the level the person decided on
        case = await judge(case)
    local, detail = local_outcome(case.decision, pending, tool)  # resume data checked here
    recorded = await record(replace(case, detail={**detail, **case.detail}))
    if recorded.effect == "presents":
        assert recorded.state is not None and case.presents is not None
        stream = presented(recorded.state, recorded.pending)
        changed = case.presents.changed
        if changed is not None:
            changed.stream = stream
            raise changed
        return Continuation(stream=stream, drive=_nothing)
    if recorded.effect == "counts":
        counted = {pending.claim_key: recorded.approvers}
        return waiting_for_more(rt, state, counted, found.escalations)
    assert recorded.claim is not None
    if not forwarded:
        report(rt, state, recorded.pending, case.decision, request.source)
    outcome = decided_outcome(rt, request, recorded.pending, case.decision, local)
    lease = Lease.of(recorded.claim, rt.owner)
    return continuation(rt, record_.version, state, recorded.pending, outcome, lease)


def presented(state: RunState, proposal: PendingCallState) -> AgentStream:
    """The (already finished) stream of a call presented again: a new ``tool-call-approval``
    chunk, then ``finish_reason "suspended"`` (nothing ran)."""
    stream = AgentStream(state.run_id)
    stream.emit(StartChunk(run_id=state.run_id))
    stream.emit(announcement(proposal.public(), state.run_id))
    stream.emit(FinishChunk(run_id=state.run_id, finish_reason="suspended"))
    pending = [p.public() for p in state.pending]
    result = RunResult(text="", finish_reason="suspended", run_id=state.run_id, pending=pending)
    stream.close(result)
    return stream


def decided_outcome(
    rt: Runtime,
    request: DecisionRequest,
    pending: PendingCallState,
    decision: Decision,
    local: OutcomeFn,
) -> OutcomeFn:
    """How a claimed call's outcome is produced: ``local`` on a call of this agent, else the
    same decision forwarded to the sub-agent owning the call (claimed there, then driven)."""
    inner_decision = decision
    if isinstance(decision, Approve) and decision.args is None and pending.edited_from is not None:
        inner_decision = Approve(args=pending.args)  # the sub-agent still holds the shown args

    async def outcome(run: Run) -> Outcome:
        if pending.delegate is None:
            return await local(run)
        sub = rt.delegate_for(pending.local_tool)
        if sub is None:
            return Outcome.error(f"sub-agent for {pending.local_tool!r} is no longer configured")
        inner_request = replace(
            request,
            run_id=pending.delegate.run_id,
            tool_call_id=pending.delegate.tool_call_id,
            fingerprint=None,
        )
        inner = await take(sub, inner_request, inner_decision, forwarded=True)
        await inner.drive()
        return await outcome_of_sub_run(inner.stream)

    return outcome


async def _nothing() -> None:
    """The drive of a stream that is already finished."""


def waiting_for_more(
    rt: Runtime,
    state: RunState,
    approvers: dict[str, list[str]],
    escalations: Sequence[EscalationRecord] = (),
) -> Continuation:
    """Quorum calls approved by fewer than they need: a stream that finishes at once,
    ``suspended``, listing who has approved each (``approvers`` per claim key) and who may
    approve under the rule in force."""
    stream = AgentStream(state.run_id)

    async def drive() -> None:
        pending = [
            in_force(rt, p.public(approvers.get(p.claim_key), escalations)) for p in state.pending
        ]
        stream.emit(StartChunk(run_id=state.run_id))
        stream.emit(FinishChunk(run_id=state.run_id, finish_reason="suspended"))
        stream.close(
            RunResult(text="", finish_reason="suspended", run_id=state.run_id, pending=pending)
        )

    return Continuation(stream=stream, drive=drive)


def local_outcome(
    decision: Decision, pending: PendingCallState, tool: Tool | None
) -> tuple[OutcomeFn, dict[str, Any]]:
    """How the decision plays out on a call of this agent, and what its claim records."""
    match decision:
        case Approve(args=edited):
            if edited is None:
                return _run_tool(pending, pending.args), {}
            args = validated_args(tool, pending, edited)
            return _run_tool(pending, args), {
                "edited": True,
                "original_args": pending.args,
                "args": args,
            }
        case Decline(reason=reason, withdrawn=True):
            told = WITHDRAWN_REASON + (f": {reason}" if reason else "")
            return _denied(told), {"reason": reason, "withdrawn": True}
        case Decline(reason=reason):
            return _denied(reason), {"reason": reason}
        case Expire():
            return _expired, {"reason": EXPIRED_REASON}
        case Resume(data=data):
            parsed = _parsed_resume_data(tool, pending, data)

            def resumed(run: Run) -> Awaitable[Outcome]:
                return run.execute(
                    pending.call_id,
                    pending.local_tool,
                    pending.local_args,
                    resume_data=parsed,
                    suspend_payload=pending.suspend_payload,
                )

            return resumed, {"resume_data": json_safe(data)}


def _run_tool(pending: PendingCallState, args: dict[str, Any]) -> OutcomeFn:
    def run_it(run: Run) -> Awaitable[Outcome]:
        return run.execute(pending.call_id, pending.local_tool, args)

    return run_it


async def _expired(run: Run) -> Outcome:
    return Outcome.expired()


def _denied(reason: str | None) -> OutcomeFn:
    async def denied(run: Run) -> Outcome:
        return Outcome.denied(reason)

    return denied


def continuation(
    rt: Runtime,
    version: int,
    state: RunState,
    pending: PendingCallState,
    outcome: OutcomeFn,
    lease: Lease,
) -> Continuation:
    """The rest of the run after a decided call: its outcome (under ``lease``), then the loop."""
    run = Run(rt, state, AgentStream(state.run_id), version=version)
    return Continuation(
        stream=run.stream, drive=lambda: run.finish_decided([(pending, outcome, lease)])
    )


async def retry(rt: Runtime, *, run_id: str, decided_by: str | None) -> AgentStream:
    """Go on with a failed run (single-use, like a decision)."""
    record = await rt.storage.load_snapshot(run_id)
    if record is None:
        raise SnapshotNotFound(run_id)
    state = RunState.model_validate(record.data)
    if state.error is None or state.pending:
        raise ToolCallNotSuspended(
            run_id, None, f"run {run_id!r} did not fail; decide its pending calls instead"
        )
    await claim_retry(rt, state, decided_by)
    state.error = None
    run = Run(rt, state, AgentStream(run_id), version=record.version)
    rt.runner.submit(run.retry(), name=f"run-{run_id}", bounded=False)
    return run.stream


def _parsed_resume_data(tool: Tool | None, pending: PendingCallState, data: Any) -> Any:
    if tool is None or tool.resume_schema is None:
        return data
    try:
        return tool.parse_resume(data)
    except ValidationError as exc:
        raise InvalidResumeData(pending.tool_call_id, validation_errors(exc)) from None


def report(
    rt: Runtime, state: RunState, pending: PendingCallState, decision: Decision, source: str
) -> None:
    """Tell the observers a decision was claimed (once, at the level the person decided on)."""
    withdrawn = isinstance(decision, Decline) and decision.withdrawn
    outcome = "withdrawn" if withdrawn else None
    report_decision(rt, state, pending, CLAIMED_AS[decision.kind], source, outcome)
