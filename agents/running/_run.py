"""The run loop: model turn → gate → execute → suspend or continue, until the model answers.

One ``Run`` drives one stretch of a run, from a new message or a decision until it finishes,
suspends, or is abandoned (``LeaseLost``: taken over; no further chunk); what goes on later is
in the ``RunState`` snapshot. A sub-agent's ``Run`` runs inside this one's task (a bounded
runner cannot deadlock on delegation).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents._config import strict_json_args
from agents._messages import Message, ToolCallPart
from agents._results import FinishReason, RunResult
from agents._runtime import Runtime
from agents.errors import LeaseLost, ModelError
from agents.gate import Granted, Proposal, propose
from agents.models._base import Usage
from agents.observing._logcontext import LoggingIds
from agents.observing._tracing import current_carrier, record_wait, run_span
from agents.running._chunks import (
    ErrorChunk,
    FinishChunk,
    StartChunk,
    StepFinishChunk,
    ToolCallChunk,
    ToolCallResumedChunk,
    announcement,
)
from agents.running._executor import Executor, outcome_of_sub_run
from agents.running._granting import granted_chunk, save_granting
from agents.running._model_turn import model_turn
from agents.running._stream import AgentStream
from agents.running._tally import Tally
from agents.running._together import together
from agents.stored._lease import Lease, held
from agents.stored._outcome import Outcome
from agents.stored._state import PendingCallState, RunState
from agents.stored._writes import RunWriter
from storage import SnapshotVersionConflict, StorageUnavailable
from tools import ApprovalPredicate, either

logger = logging.getLogger(__name__)

OutcomeFn = Callable[["Run"], Awaitable[Outcome]]
"""Produces a decided call's outcome, given the run that continues (to execute on)."""
Decided = tuple[PendingCallState, OutcomeFn, Lease]  # a claimed call, its outcome, its lease


class Run:
    """Drives one stretch of a run and reports it on an ``AgentStream``."""

    def __init__(
        self,
        rt: Runtime,
        state: RunState,
        stream: AgentStream,
        *,
        version: int = 0,
        approval_predicate: bool | ApprovalPredicate | None = None,
    ) -> None:
        self.rt = rt
        self.executor = Executor(rt)
        self.state = state
        self.stream = stream
        self.writer = RunWriter(rt, version=version)  # one transaction per change of state
        self.approval_predicate = (
            approval_predicate if approval_predicate is not None else state.require_tool_approval
        )
        self.tally = Tally()
        self.approved_by: dict[str, list[str]] = {}  # per claim key, when known (a batch's)

    # -- entry points ----------------------------------------------------------------------
    async def start(self, prompt: str, proposed: ToolCallPart | None = None) -> None:
        """A new user message: record it, then loop (``proposed``: the first step is this call,
        not a model turn; it is gated like any call the model makes)."""
        await self._guarded(self._start(prompt, proposed), "agent.turn")

    async def _start(self, prompt: str, proposed: ToolCallPart | None) -> None:
        self.stream.emit(StartChunk(run_id=self.state.run_id))
        user = Message(role="user", content=prompt)
        self.state.messages.append(user)
        await self.writer.remember(self.state, [user])
        await self._loop(proposed)

    async def finish_decided(self, decided: Sequence[Decided]) -> None:
        """After decisions: each call's outcome under its lease, stored; go on if the step is."""
        await self._guarded(self._finish_decided(decided), "agent.resume")

    async def _finish_decided(self, decided: Sequence[Decided]) -> None:
        self.stream.emit(StartChunk(run_id=self.state.run_id))
        fresh: list[PendingCallState] = []
        answering: Lease | None = None
        for pending, outcome_of, lease in decided:  # a batch's calls one after the other
            record_wait(
                tool_name=pending.tool_name,
                tool_call_id=pending.tool_call_id,
                since=pending.suspended_at,
                carrier=self.state.trace_context,
            )
            self.stream.emit(
                ToolCallResumedChunk(
                    run_id=self.state.run_id,
                    tool_call_id=pending.tool_call_id,
                    tool_name=pending.tool_name,
                    kind=pending.kind,
                )
            )
            outcome = await held(self.rt, lease, outcome_of(self), fence=self.stream.fence)
            more, answering = await self._store_outcome(pending, outcome, lease)
            fresh += more
        await self._go_on(fresh, answering)

    async def _store_outcome(
        self, pending: PendingCallState, outcome: Outcome, lease: Lease
    ) -> tuple[list[PendingCallState], Lease | None]:
        """A decided (or granted) call's outcome under ``lease``, stored: from here on the
        thread is owed an answer (every write waits out an outage)."""
        self.writer.complete(self.state, pending, outcome, lease)
        self.writer.patient = True
        return await self._apply_outcome(pending, outcome)

    async def _go_on(self, fresh: list[PendingCallState], answering: Lease | None) -> None:
        """After outcomes: suspend while anything is pending, else call the model again (under
        ``answering``, the lease of the answer a thread is owed)."""
        if self.state.pending:
            await self._suspend(fresh)
        elif answering is None:
            await self._loop()
        else:
            await held(self.rt, answering, self._loop(), fence=self.stream.fence)

    async def answer_again(self, lease: Lease, call: ToolCallResumedChunk) -> None:
        """Recovered: the model's answer after a decided call, whose process died before that
        answer was stored (``lease``: the continuation claim, taken over)."""
        await self._guarded(self._answer_again(lease, call), "agent.resume")

    async def _answer_again(self, lease: Lease, call: ToolCallResumedChunk) -> None:
        self.stream.emit(StartChunk(run_id=self.state.run_id))
        self.stream.emit(call)  # the call whose outcome this answer is
        self.writer.owe(lease)
        await held(self.rt, lease, self._loop(), fence=self.stream.fence)

    async def retry(self) -> None:
        """Go on with a run that stopped on an error, from its last stored state."""
        await self._guarded(self._retry(), "agent.retry")

    async def _retry(self) -> None:
        self.stream.emit(StartChunk(run_id=self.state.run_id))
        await self._loop()

    async def _guarded(self, body: Any, span_name: str) -> None:
        state = self.state
        with (
            LoggingIds(run_id=state.run_id, thread_id=state.thread_id),
            run_span(
                span_name,
                run_id=state.run_id,
                agent_id=self.rt.id,
                thread_id=state.thread_id,
                carrier=state.trace_context,
            ),
        ):
            try:
                await body
            except LeaseLost as exc:  # taken over: the new owner tells all, this one nobody
                logger.warning("run %s abandoned: %s", state.run_id, exc)
                self.stream.close(self._result("abandoned", error=exc))
            except Exception as exc:
                if isinstance(exc, ModelError | StorageUnavailable):  # expected: one line
                    logger.warning("run %s of agent %s failed: %s", state.run_id, self.rt.id, exc)
                else:
                    logger.exception("run %s of agent %s failed", state.run_id, self.rt.id)
                await self.writer.keep_failed(self.state, exc)
                self.stream.emit(ErrorChunk(run_id=self.state.run_id, error=exc))
                self.stream.emit(FinishChunk(run_id=self.state.run_id, finish_reason="error"))
                self.stream.close(self._result("error", error=exc))

    # -- executing -------------------------------------------------------------------------
    async def execute(
        self,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        resume_data: Any = None,
        suspend_payload: dict[str, Any] | None = None,
    ) -> Outcome:
        """Run one call now: a local tool, or the sub-agent behind ``agent-<key>``."""
        sub = self.rt.delegate_for(name)
        if sub is None:
            return await self.executor.execute(
                self.state,
                call_id,
                name,
                args,
                resume_data=resume_data,
                suspend_payload=suspend_payload,
            )
        prompt = args.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            return Outcome.error(f"{name} needs {{'prompt': '<the task>'}}")
        # The sub-agent's own rules (its default_options) apply too: the gate is the OR of
        # the supervisor's and the sub-agent's, never the supervisor's alone.
        state, own = sub.start_state(
            thread_id=None,
            resource_id=self.state.resource_id,
            require_tool_approval=None,
            max_steps=None,
            request_context=self.state.request_context,
            auto_resume=bool(sub.default_options.get("auto_resume_suspended_tools", False)),
            requested_by=self.state.requested_by,
            approval_ttl_seconds=self.state.approval_ttl_seconds,
        )
        approval = either(self.approval_predicate, own)
        state.require_tool_approval = (
            state.require_tool_approval or self.state.require_tool_approval
        )
        inner = Run(sub, state, AgentStream(state.run_id), approval_predicate=approval)
        await inner.start(prompt)
        return await outcome_of_sub_run(inner.stream)

    # -- the loop --------------------------------------------------------------------------
    async def _loop(self, proposed: ToolCallPart | None = None) -> None:
        while True:
            if self.state.steps >= self.state.max_steps:
                await self._finish("length")
                return
            if proposed is not None:  # asked again: the call as it was, no model turn
                text, calls, usage = "", [proposed], Usage()
                proposed = None
            else:
                text, calls, usage = await self._model_turn()
            canonical_args = [strict_json_args(c) for c in calls]
            self.state.steps += 1
            assistant = Message(role="assistant", content=text or None, tool_calls=calls)
            self.state.messages.append(assistant)
            await self.writer.remember(self.state, [assistant])
            if not calls:
                self.tally.record_step(text, [], usage)
                self.stream.emit(StepFinishChunk(run_id=self.state.run_id, finish_reason="stop"))
                await self._finish("stop")
                return
            for c in calls:
                self.stream.emit(
                    ToolCallChunk(
                        run_id=self.state.run_id,
                        tool_call_id=c.id,
                        tool_name=c.name,
                        args=dict(c.args),
                    )
                )
            fresh = await self._run_calls(calls, canonical_args)
            self.tally.record_step(text, calls, usage)
            self.stream.emit(StepFinishChunk(run_id=self.state.run_id, finish_reason="tool-calls"))
            if fresh:
                await self._suspend(fresh)
                return

    async def _model_turn(self) -> tuple[str, list[ToolCallPart], Usage]:
        joined, calls, usage = await model_turn(
            self.rt, self.state, self.stream, patient=self.writer.patient
        )
        self.tally.text += joined
        self.tally.usage = self.tally.usage + usage
        return joined, calls, usage

    async def _run_calls(
        self, calls: list[ToolCallPart], canonical_args: list[str | None]
    ) -> list[PendingCallState]:
        """Ask the gate what every call needs, run the ungated ones together; returns the new
        pending calls."""
        rule = self.approval_predicate
        needs = await together(
            [propose(Proposal.of_call(self.rt, c, self.state, rule)) for c in calls]
        )
        free = [c for c, n in zip(calls, needs, strict=True) if not n.held]
        outcomes = await together([self.execute(c.id, c.name, c.args) for c in free])
        by_id = dict(zip([c.id for c in free], outcomes, strict=True))
        fresh: list[PendingCallState] = []
        for c, n, encoded in zip(calls, needs, canonical_args, strict=True):
            if n.held:
                fresh.append(self.executor.approval_entry(self.state, c, n, encoded))
            else:
                fresh.extend(self._fold(c.id, c.name, c.args, by_id[c.id], []))
                await self.writer.remember_outcome(self.state, c.id, c.name, by_id[c.id])
                self.tally.announce(self.stream, c.id, c.name, by_id[c.id])
        self.state.pending.extend(fresh)
        return fresh

    def _fold(
        self,
        call_id: str,
        local_tool: str,
        local_args: dict[str, Any],
        outcome: Outcome,
        previous: list[PendingCallState],
    ) -> list[PendingCallState]:
        """Put an outcome into the state: a tool message, or new pending entries."""
        if outcome.terminal:
            self.state.messages.append(outcome.tool_message(call_id, local_tool))
            return []
        return self.executor.pending_entries(
            self.state, call_id, local_tool, local_args, outcome, previous
        )

    async def _apply_outcome(
        self, pending: PendingCallState, outcome: Outcome
    ) -> tuple[list[PendingCallState], Lease | None]:
        """Fold a decided call's outcome into the stored snapshot (retrying on conflicts).

        One transaction: the claim's completion, the snapshot, the tool's message in memory,
        the audit, and, when nothing is left pending in a run with a memory thread (the model
        answers next, and the thread is owed that answer), the ``continued`` claim that leases
        the answer to this instance. Returns the calls that start pending and that lease.
        """
        await self.writer.remember_outcome(self.state, pending.call_id, pending.local_tool, outcome)
        while True:
            siblings = [p for p in self.state.pending if p.call_id == pending.call_id]
            self.state.pending = [p for p in self.state.pending if p.call_id != pending.call_id]
            if outcome.status == "delegated":
                # Keep handles of sibling inner calls that are still pending.
                siblings = [s for s in siblings if s.tool_call_id != pending.tool_call_id] + [
                    pending
                ]
            fresh = self._fold(
                pending.call_id, pending.local_tool, pending.local_args, outcome, siblings
            )
            self.state.pending.extend(fresh)
            try:
                answering = None
                if self.state.pending:
                    await self.writer.save(self.state)
                elif self.writer.remembers(self.state):  # a thread: the answer is owed to it
                    answering = await self.writer.save_continuing(self.state, pending)
                else:  # nobody but this process's caller could be told the answer
                    await self.writer.finish(self.state)
                self.tally.announce(self.stream, pending.call_id, pending.local_tool, outcome)
                return fresh, answering
            except SnapshotVersionConflict:
                record = await self.rt.storage.load_snapshot(self.state.run_id)
                if record is None:
                    raise
                self.state = RunState.model_validate(record.data)
                self.writer.version = record.version

    # -- suspension and the end ------------------------------------------------------------
    async def _suspend(self, fresh: list[PendingCallState]) -> None:
        """Store the snapshot FIRST (with the requests' audit), then announce the new calls.

        Every call a standing grant approves (``agents.gate.usable_grant``) is written decided
        in that same transaction (the grantors' claims and the grants' uses with the snapshot
        that stores them) and runs instead of waiting. A grant that no longer allows those uses
        (used up meanwhile) approves none of them: its calls wait like the others.
        """
        granted: list[Granted] = []
        if fresh:
            self.state.trace_context = current_carrier()
            self.writer.requested(self.state, fresh)
            granted = await save_granting(self.rt, self.writer, self.state, fresh)
        taken = {g.pending.claim_key for g in granted}
        for p in fresh:
            if p.claim_key not in taken:
                self.stream.emit(announcement(p.public(), self.state.run_id))
        if granted:
            await self._run_granted(granted)
            return
        self.stream.emit(FinishChunk(run_id=self.state.run_id, finish_reason="suspended"))
        self.stream.close(self._result("suspended"))

    async def _run_granted(self, granted: list[Granted]) -> None:
        """Run the calls grants approved (``tool-call-granted`` first), then go on as after a
        decision: suspend while anything is pending, else call the model again."""
        fresh: list[PendingCallState] = []
        answering: Lease | None = None
        for g in granted:
            self.stream.emit(granted_chunk(g, self.state.run_id))
            pending = g.pending
            lease = Lease.of(g.claim, self.rt.owner)
            work = self.execute(pending.call_id, pending.local_tool, pending.args)
            outcome = await held(self.rt, lease, work, fence=self.stream.fence)
            more, answering = await self._store_outcome(pending, outcome, lease)
            fresh.extend(more)
        await self._go_on(fresh, answering)

    async def _finish(self, reason: FinishReason) -> None:
        await self.writer.finish(self.state)
        self.stream.emit(FinishChunk(run_id=self.state.run_id, finish_reason=reason))
        self.stream.close(self._result(reason))

    def _result(self, reason: FinishReason, error: BaseException | None = None) -> RunResult:
        pending = [p.public(self.approved_by.get(p.claim_key)) for p in self.state.pending]
        return self.tally.result(self.state.run_id, reason, pending, error)
