"""``decide``: the one entry point for every decision (approve, decline, resume, expire).

find → validate (edited args, resume data) → claim (+ audit) → continue the run. Everything
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
from agents._fingerprint import strict_canonical_json
from agents._results import RunResult
from agents._runtime import Runtime
from agents.deciding._authority import still_counting
from agents.deciding._claims import CLAIMED_AS, Kind, add_approval, claim, claim_retry, find, guard
from agents.deciding._edits import edited_proposal
from agents.deciding._lease import Lease
from agents.deciding._present import check_definition, present_again, presented
from agents.deciding._state import PendingCallState, RunState
from agents.deciding.standing._grants import requested_grant
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
from agents.errors import (
    InvalidResumeData,
    InvalidToolArgs,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from agents.observing._observe import DecisionTaken, notify
from agents.running._chunks import FinishChunk, StartChunk
from agents.running._executor import outcome_of_sub_run
from agents.running._outcome import Outcome
from agents.running._run import OutcomeFn, Run
from agents.running._stream import AgentStream
from storage import EscalationRecord, SnapshotVersionConflict, utcnow
from tools import Tool, ToolInputError

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
    record, state, pending = found.record, found.state, found.pending
    decided_by, source = request.decided_by, request.source
    if not forwarded:
        await guard(rt, found, decision, decided_by)
        if isinstance(decision, Approve):
            await check_definition(
                rt, found, decided_by=decided_by, source=source, seen=request.definition_digest
            )
    tool = rt.find_tool(pending.agent_path, pending.tool_name)
    grant = None
    if not forwarded and isinstance(decision, Approve):
        grant = requested_grant(found, decision, decided_by)  # raises before any claim
    if not forwarded and isinstance(decision, Approve) and decision.args is not None:
        args = _validated_args(tool, pending, decision.args)  # raises before any claim
        if args == pending.args:
            decision = Approve(grant=decision.grant)
        else:
            proposal = await edited_proposal(rt, found, args, decided_by)
            if proposal is not None:
                detail = {"edited": True, "original_args": pending.args, "args": args}
                stored = await present_again(
                    rt,
                    found,
                    proposal,
                    claimed_as="edited",
                    decided_by=decided_by,
                    source=source,
                    detail=detail,
                )
                return Continuation(stream=presented(stored, proposal), drive=_nothing)
    local, detail = local_outcome(decision, pending, tool)
    if not forwarded and isinstance(decision, Approve) and pending.approvals_required > 1:
        assert decided_by is not None  # guard() refused a quorum approval without one
        approvers = pending.counted(await add_approval(rt, found, decided_by))
        if len(approvers) >= pending.approvals_required:
            pending, approvers = await still_counting(rt, found, approvers, decided_by)
        if len(approvers) < pending.approvals_required:
            return waiting_for_more(state, {pending.claim_key: approvers}, found.escalations)
        detail = {**detail, "approved_by": approvers}
    if grant is not None:
        detail = {**detail, "grant_id": grant.grant_id}
    taken = await claim(
        rt,
        state,
        pending,
        decision,
        decided_by=decided_by,
        source=source,
        detail=detail,
        grant=grant,
    )
    if not forwarded:
        report(rt, state, pending, decision, source)
    outcome = decided_outcome(rt, request, pending, decision, local)
    return continuation(rt, record.version, state, pending, outcome, Lease.of(taken, rt.owner))


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
    state: RunState,
    approvers: dict[str, list[str]],
    escalations: Sequence[EscalationRecord] = (),
) -> Continuation:
    """Quorum calls approved by fewer than they need: a stream that finishes at once,
    ``suspended``, listing who has approved each (``approvers`` per claim key)."""
    stream = AgentStream(state.run_id)

    async def drive() -> None:
        pending = [
            p.public(approvers[p.claim_key], escalations)
            if p.claim_key in approvers
            else p.public(escalations=escalations)
            for p in state.pending
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
            args = _validated_args(tool, pending, edited)
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
            return _denied(EXPIRED_REASON), {"reason": EXPIRED_REASON}
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


def _validated_args(
    tool: Tool | None, pending: PendingCallState, args: dict[str, Any]
) -> dict[str, Any]:
    """The edited arguments, checked against the input schema and kept as the person gave them
    (a dump of the parsed model would turn ``250`` into ``250.0`` for a float field)."""
    try:
        strict_canonical_json(args).encode("utf-8")  # stored, shown and fingerprinted as given
    except (ValueError, UnicodeEncodeError):
        error = {"loc": [], "msg": "not strict JSON (NaN, Infinity or a lone surrogate)"}
        raise InvalidToolArgs(pending.tool_call_id, [{**error, "type": "json_invalid"}]) from None
    except TypeError:
        pass  # keys of mixed types: the schema says what it makes of them
    if tool is None:
        return dict(args)
    try:
        tool.parse_input(args)
    except ToolInputError as exc:
        raise InvalidToolArgs(pending.tool_call_id, list(exc.errors)) from None
    return dict(args)


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
    if not rt.observers:
        return
    notify(
        rt.observers,
        DecisionTaken(
            agent_id=rt.id,
            run_id=state.run_id,
            tool_call_id=pending.tool_call_id,
            tool_name=pending.tool_name,
            decision=CLAIMED_AS[decision.kind],  # type: ignore[arg-type]
            source=source,
            waited_seconds=max(0.0, (utcnow() - pending.suspended_at).total_seconds()),
            outcome="withdrawn" if isinstance(decision, Decline) and decision.withdrawn else None,
        ),
    )
