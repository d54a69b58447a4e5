"""The run loop: model turn → gate → execute → suspend or continue, until the model answers.

One ``Run`` drives one stretch of a run, from a new message or a decision until the run
finishes or suspends again; everything needed to go on later is in the ``RunState`` snapshot.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents._messages import Message, ToolCallPart
from agents._outcome import Outcome
from agents._results import (
    FinishReason,
    PendingToolCall,
    RunResult,
    StepResult,
    ToolCallRecord,
    ToolResultRecord,
)
from agents._state import PendingCallState, RunState
from agents._stream import AgentStream
from agents.models._base import ModelRequest, ObjectOutput, TextDelta, ToolCallRequest, Usage
from storage import SnapshotRecord, SnapshotVersionConflict, utcnow
from tools import ApprovalContext, ApprovalPredicate, evaluate_predicate

if TYPE_CHECKING:
    from agents._agent import Agent

logger = logging.getLogger(__name__)


@dataclass
class _Tally:
    """What this stretch of the run produced, for its ``RunResult``."""

    text: str = ""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    tool_results: list[ToolResultRecord] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


class Run:
    """Drives one stretch of a run and reports it on an ``AgentStream``."""

    def __init__(
        self,
        agent: Agent,
        state: RunState,
        stream: AgentStream,
        *,
        version: int = 0,
        approval_predicate: bool | ApprovalPredicate | None = None,
    ) -> None:
        self.agent = agent
        self.state = state
        self.stream = stream
        self.version = version
        """The stored snapshot's version (0: none stored)."""
        self.approval_predicate = (
            approval_predicate if approval_predicate is not None else state.require_tool_approval
        )
        self.tally = _Tally()

    # -- entry points ----------------------------------------------------------------------
    async def start(self, prompt: str) -> None:
        """A new user message: record it, then loop."""
        await self._guarded(self._start(prompt))

    async def _start(self, prompt: str) -> None:
        await self.stream.emit("start")
        user = Message(role="user", content=prompt)
        self.state.messages.append(user)
        await self._remember([user])
        await self._loop()

    async def finish_decided(self, pending: PendingCallState, outcome_task: Any) -> None:
        """After a decision: get the call's outcome, store it, and go on if the step is done."""
        await self._guarded(self._finish_decided(pending, outcome_task))

    async def _finish_decided(self, pending: PendingCallState, outcome_task: Any) -> None:
        await self.stream.emit("start")
        kind = pending.kind
        await self.stream.emit(
            "tool-call-resumed",
            tool_call_id=pending.tool_call_id,
            tool_name=pending.tool_name,
            kind=kind,
        )
        outcome: Outcome = await outcome_task()
        await self.agent._decisions.complete(self.state, pending, outcome)
        fresh = await self._apply_outcome(pending, outcome)
        if self.state.pending:
            await self._suspend(fresh)
            return
        await self._drop_snapshot()
        await self._loop()

    async def retry(self) -> None:
        """Go on with a run that stopped on an error, from its last stored state."""
        await self._guarded(self._retry())

    async def _retry(self) -> None:
        await self.stream.emit("start")
        await self._loop()

    async def _guarded(self, body: Any) -> None:
        try:
            await body
        except Exception as exc:
            logger.exception("run %s of agent %s failed", self.state.run_id, self.agent.id)
            await self._keep_failed(exc)
            await self.stream.emit("error", error=exc)
            await self.stream.emit("finish", finish_reason="error")
            await self.stream.close(self._result("error", error=exc))

    # -- the loop --------------------------------------------------------------------------
    async def _loop(self) -> None:
        while True:
            if self.state.steps >= self.state.max_steps:
                await self._finish("length")
                return
            text, calls, usage = await self._model_turn()
            self.state.steps += 1
            assistant = Message(role="assistant", content=text or None, tool_calls=calls)
            self.state.messages.append(assistant)
            await self._remember([assistant])
            if not calls:
                self._record_step(text, [], usage)
                await self.stream.emit("step-finish", finish_reason="stop")
                await self._finish("stop")
                return
            for c in calls:
                await self.stream.emit(
                    "tool-call", tool_call_id=c.id, tool_name=c.name, args=dict(c.args)
                )
            fresh = await self._run_calls(calls)
            self._record_step(text, calls, usage)
            await self.stream.emit("step-finish", finish_reason="tool-calls")
            if fresh:
                await self._suspend(fresh)
                return

    async def _model_turn(self) -> tuple[str, list[ToolCallPart], Usage]:
        request = ModelRequest(
            messages=await self.agent._conversation(self.state), tools=self.agent._tool_specs()
        )
        text: list[str] = []
        calls: list[ToolCallPart] = []
        usage = Usage()
        async for event in self.agent.model.stream(request):
            if isinstance(event, TextDelta):
                text.append(event.text)
                await self.stream.emit("text-delta", text=event.text)
            elif isinstance(event, ToolCallRequest):
                calls.append(ToolCallPart(id=event.id, name=event.name, args=event.args))
            elif isinstance(event, Usage):
                usage = usage + event
            elif isinstance(event, ObjectOutput):
                text.append(str(event.value))
        joined = "".join(text)
        self.tally.text += joined
        self.tally.usage = self.tally.usage + usage
        return joined, calls, usage

    async def _run_calls(self, calls: list[ToolCallPart]) -> list[PendingCallState]:
        """Gate every call, run the ungated ones together; returns the new pending calls."""
        gated = await asyncio.gather(*(self._needs_approval(c) for c in calls))
        free = [c for c, g in zip(calls, gated, strict=True) if not g]
        outcomes = await asyncio.gather(
            *(self.agent._executor.execute(self.state, c.id, c.name, c.args) for c in free)
        )
        by_id = dict(zip([c.id for c in free], outcomes, strict=True))
        fresh: list[PendingCallState] = []
        for c, g in zip(calls, gated, strict=True):
            if g:
                fresh.append(self.agent._executor.approval_entry(self.state, c))
            else:
                fresh.extend(self._fold(c.id, c.name, c.args, by_id[c.id], []))
                await self._announce(c.id, c.name, by_id[c.id])
        self.state.pending.extend(fresh)
        return fresh

    async def _needs_approval(self, call: ToolCallPart) -> bool:
        context = ApprovalContext(
            tool_name=call.name, args=dict(call.args), request_context=self.state.request_context
        )
        tool = self.agent._tools.get(call.name)
        if tool is not None and await tool.needs_approval(context):
            return True
        return await evaluate_predicate(self.approval_predicate, context)

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
        return self.agent._executor.pending_entries(
            self.state, call_id, local_tool, local_args, outcome, previous
        )

    async def _announce(self, call_id: str, local_tool: str, outcome: Outcome) -> None:
        """Tell memory, the tally and the stream about a terminal outcome."""
        if not outcome.terminal:
            return
        await self._remember([outcome.tool_message(call_id, local_tool)])
        self.tally.tool_results.append(
            ToolResultRecord(tool_call_id=call_id, tool_name=local_tool, result=outcome.result)
        )
        if outcome.status == "denied":
            await self.stream.emit(
                "tool-output-denied",
                tool_call_id=call_id,
                tool_name=local_tool,
                reason=outcome.reason,
            )
        else:
            await self.stream.emit(
                "tool-result", tool_call_id=call_id, tool_name=local_tool, result=outcome.result
            )

    async def _apply_outcome(
        self, pending: PendingCallState, outcome: Outcome
    ) -> list[PendingCallState]:
        """Fold a decided call's outcome into the stored snapshot (retrying on conflicts)."""
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
                await self._save()
                await self._announce(pending.call_id, pending.local_tool, outcome)
                return fresh
            except SnapshotVersionConflict:
                record = await self.agent.storage.load_snapshot(self.state.run_id)
                if record is None:
                    raise
                self.state = RunState.model_validate(record.data)
                self.version = record.version

    # -- suspension and the end ------------------------------------------------------------
    async def _suspend(self, fresh: list[PendingCallState]) -> None:
        """Store the snapshot FIRST, then announce the new pending calls."""
        if fresh:
            await self._save()
        await self.agent._audit_requests(self.state, fresh)
        for p in fresh:
            public = p.public()
            if p.kind == "approval":
                await self.stream.emit(
                    "tool-call-approval",
                    tool_call_id=p.tool_call_id,
                    tool_name=p.tool_name,
                    args=dict(p.args),
                    fingerprint=p.fingerprint,
                    resume_schema=p.resume_schema,
                    agent_path=list(p.agent_path),
                )
            else:
                await self.stream.emit(
                    "tool-call-suspended",
                    tool_call_id=p.tool_call_id,
                    tool_name=p.tool_name,
                    args=dict(p.args),
                    suspend_payload=public.suspend_payload,
                    resume_schema=p.resume_schema,
                    agent_path=list(p.agent_path),
                )
        await self.stream.emit("finish", finish_reason="suspended")
        await self.stream.close(self._result("suspended"))

    async def _finish(self, reason: FinishReason) -> None:
        await self._drop_snapshot()
        await self.stream.emit("finish", finish_reason=reason)
        await self.stream.close(self._result(reason))

    def _result(self, reason: FinishReason, error: BaseException | None = None) -> RunResult:
        pending: list[PendingToolCall] = (
            [p.public() for p in self.state.pending] if reason == "suspended" else []
        )
        return RunResult(
            text=self.tally.text,
            finish_reason=reason,
            run_id=self.state.run_id,
            pending=pending,
            tool_calls=list(self.tally.tool_calls),
            tool_results=list(self.tally.tool_results),
            steps=list(self.tally.steps),
            usage=self.tally.usage,
            error=error,
        )

    def _record_step(self, text: str, calls: list[ToolCallPart], usage: Usage) -> None:
        records = [ToolCallRecord(tool_call_id=c.id, tool_name=c.name, args=c.args) for c in calls]
        self.tally.tool_calls.extend(records)
        ids = {c.id for c in calls}
        self.tally.steps.append(
            StepResult(
                text=text,
                tool_calls=records,
                tool_results=[r for r in self.tally.tool_results if r.tool_call_id in ids],
                usage=usage,
            )
        )

    # -- persistence -----------------------------------------------------------------------
    async def _save(self) -> None:
        record = SnapshotRecord(
            run_id=self.state.run_id,
            agent_id=self.state.agent_id,
            thread_id=self.state.thread_id,
            resource_id=self.state.resource_id,
            suspended_at=utcnow(),
            version=self.version + 1,
            data=self.state.to_document(),
        )
        await self.agent.storage.save_snapshot(record)
        self.version = record.version

    async def _keep_failed(self, exc: Exception) -> None:
        """Store the failed run (messages, tool results) so ``retry_run`` can go on with it."""
        if self.state.pending or not self.state.messages:
            return
        self.state.error = f"{type(exc).__name__}: {exc}"
        try:
            await self._save()
        except Exception:
            logger.exception("could not store failed run %s for a retry", self.state.run_id)

    async def _drop_snapshot(self) -> None:
        if self.version:
            await self.agent.storage.delete_snapshot(self.state.run_id)
            self.version = 0

    async def _remember(self, messages: list[Message]) -> None:
        memory = self.agent.memory
        if memory is not None and self.state.thread_id:
            await memory.append(
                self.state.thread_id, self.state.resource_id, self.state.run_id, messages
            )
