"""Running one local tool call and describing what pends.

Delegations to sub-agents are driven by the run loop (``agents.running._run``), inside the
supervisor's own task.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from agents._config import DELEGATION_PREFIX
from agents._fingerprint import fingerprint
from agents._hooks import ToolCallInfo, call_hook
from agents._messages import ToolCallPart
from agents._runtime import Runtime
from agents.errors import AgentError, LeaseLost
from agents.gate import Needs
from agents.observing._logcontext import LoggingIds
from agents.observing._observe import ToolExecuted, ToolOutcome, notify
from agents.observing._tracing import span
from agents.running._stream import AgentStream
from agents.stored._outcome import Outcome
from agents.stored._state import DelegateRef, PendingCallState, RunState
from storage import utcnow
from tools import Suspended, ToolContext, ToolError

logger = logging.getLogger(__name__)


class Executor:
    """Executes local tool calls for one agent, with its hooks."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    async def execute(
        self,
        state: RunState,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        resume_data: Any = None,
        suspend_payload: dict[str, Any] | None = None,
    ) -> Outcome:
        """Run a local call now (it was not gated, or it was approved/resumed)."""
        started = time.monotonic()
        with (
            LoggingIds(tool_call_id=call_id),
            span(
                "tool.execute",
                **{"countersign.tool": name, "countersign.tool_call_id": call_id},
            ) as tool_span,
        ):
            outcome, skipped = await self._execute(
                state, call_id, name, args, resume_data=resume_data, suspend_payload=suspend_payload
            )
            tool_span.set_attribute("countersign.outcome", "skipped" if skipped else outcome.status)
        if self.rt.observers and name in self.rt.tools:
            reported: ToolOutcome = "skipped" if skipped else outcome.status  # type: ignore[assignment]
            notify(
                self.rt.observers,
                ToolExecuted(
                    agent_id=self.rt.id,
                    run_id=state.run_id,
                    tool_call_id=call_id,
                    tool_name=name,
                    outcome=reported,
                    seconds=time.monotonic() - started,
                ),
            )
        return outcome

    async def _execute(
        self,
        state: RunState,
        call_id: str,
        name: str,
        args: dict[str, Any],
        *,
        resume_data: Any,
        suspend_payload: dict[str, Any] | None,
    ) -> tuple[Outcome, bool]:
        """The call's outcome, and whether a ``before_tool_call`` hook skipped it."""
        tool = self.rt.tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self.rt.tools)) or "none"
            return Outcome.error(f"unknown tool {name!r}; available tools: {known}"), False
        before = self.rt.hooks.before_tool_call
        if before is not None:  # no hook, no ToolCallInfo to build
            verdict = await call_hook(before, _info(state, call_id, name, args, result=None))
            if isinstance(verdict, dict) and verdict.get("proceed") is False:
                return Outcome(status="ok", result=verdict.get("output")), True
        ctx = ToolContext(
            run_id=state.run_id,
            tool_call_id=call_id,
            agent_id=self.rt.id,
            thread_id=state.thread_id,
            resource_id=state.resource_id,
            request_context=state.request_context,
            resume_data=resume_data,
            suspend_payload=suspend_payload,
            idempotency_key=f"{state.run_id}:{call_id}",
        )
        try:
            result = await tool.run(args, ctx)
        except ToolError as exc:
            return Outcome.error(str(exc)), False
        except Exception as exc:
            logger.warning("tool %s (call %s) raised %r", name, call_id, exc)
            return Outcome.error(f"tool {name!r} failed: {type(exc).__name__}: {exc}"), False
        if isinstance(result, Suspended):
            return Outcome(status="suspended", suspend_payload=result.payload), False
        after = self.rt.hooks.after_tool_call
        if after is not None:
            await call_hook(after, _info(state, call_id, name, args, result=result))
        return Outcome(status="ok", result=result), False

    # -- pending entries -------------------------------------------------------------------
    # PendingCallState validates its dict fields into new (shallow) dicts: no copies needed here.
    def approval_entry(
        self,
        state: RunState,
        call: ToolCallPart,
        needs: Needs,
        canonical_args: str | None = None,
    ) -> PendingCallState:
        """The pending entry of a call the gate holds for approval before it runs (``needs``:
        what the gate decided it needs; ``canonical_args``: the arguments' canonical JSON,
        when the caller has it)."""
        tool = self.rt.tools.get(call.name)
        now = utcnow()
        grants = needs.grants
        return PendingCallState(
            tool_call_id=call.id,
            call_id=call.id,
            local_tool=call.name,
            local_args=call.args,
            requires_approval=True,
            tool_name=call.name,
            args=call.args,
            fingerprint=fingerprint(call.name, call.args, canonical_args=canonical_args),
            agent_path=[self.rt.id],
            resume_schema=tool.resume_json_schema() if tool else None,
            suspended_at=now,
            requested_by=state.requested_by,
            expires_at=needs.expires_at(now),
            approvals_required=needs.approvals,
            definition_digest=tool.definition_digest if tool else None,
            grantable=grants is not None,
            grant_max_seconds=grants.max_seconds if grants is not None else None,
            grant_max_uses=grants.max_uses if grants is not None else None,
            requirement=needs.requirement,
        )

    def pending_entries(
        self,
        state: RunState,
        call_id: str,
        local_tool: str,
        local_args: dict[str, Any],
        outcome: Outcome,
        previous: list[PendingCallState],
    ) -> list[PendingCallState]:
        """Entries for a call that suspended itself or whose sub-agent run is waiting."""
        now = utcnow()
        if outcome.status == "suspended":
            tool = self.rt.tools.get(local_tool)
            prior = next((p for p in previous if p.tool_call_id == call_id), None)
            return [
                PendingCallState(
                    tool_call_id=call_id,
                    call_id=call_id,
                    local_tool=local_tool,
                    local_args=local_args,
                    requires_approval=False,
                    tool_name=local_tool,
                    args=local_args,
                    fingerprint=fingerprint(local_tool, local_args),
                    agent_path=[self.rt.id],
                    suspend_payload=outcome.suspend_payload,
                    resume_schema=tool.resume_json_schema() if tool else None,
                    round=prior.round + 1 if prior else 0,
                    suspended_at=now,
                    requested_by=state.requested_by,
                    definition_digest=tool.definition_digest if tool else None,
                )
            ]
        key = local_tool.removeprefix(DELEGATION_PREFIX)
        by_inner = {p.delegate.tool_call_id: p for p in previous if p.delegate is not None}
        entries: list[PendingCallState] = []
        taken = {p.tool_call_id for p in previous}
        for inner in outcome.inner_pending:
            prior = by_inner.get(inner.tool_call_id)
            if prior is not None:
                handle, round_ = prior.tool_call_id, prior.round + 1
            else:
                alone = len(outcome.inner_pending) == 1 and call_id not in taken
                handle, round_ = (call_id if alone else f"{call_id}/{inner.tool_call_id}"), 0
            entries.append(
                PendingCallState(
                    tool_call_id=handle,
                    call_id=call_id,
                    local_tool=local_tool,
                    local_args=local_args,
                    requires_approval=inner.requires_approval,
                    tool_name=inner.tool_name,
                    args=inner.args,
                    fingerprint=inner.fingerprint,
                    agent_path=[self.rt.id, *inner.agent_path],
                    suspend_payload=inner.suspend_payload,
                    resume_schema=inner.resume_schema,
                    round=round_,
                    suspended_at=now,
                    requested_by=inner.requested_by,
                    expires_at=inner.expires_at,
                    approvals_required=inner.approvals_required,
                    definition_digest=inner.definition_digest,
                    edited_from=inner.edited_from,
                    edited_by=inner.edited_by,
                    requirement=inner.requirement,
                    delegate=DelegateRef(
                        agent_key=key,
                        run_id=outcome.inner_run_id or "",
                        tool_call_id=inner.tool_call_id,
                    ),
                )
            )
        return entries


def _info(
    state: RunState, call_id: str, name: str, args: dict[str, Any], *, result: Any
) -> ToolCallInfo:
    """What a hook sees about the call (``result``: None before it runs)."""
    return ToolCallInfo(
        tool_name=name,
        input=dict(args),
        tool_call_id=call_id,
        run_id=state.run_id,
        request_context=state.request_context,
        result=result,
    )


async def outcome_of_sub_run(stream: AgentStream) -> Outcome:
    """Turn a sub-agent's finished (or suspended) run into the delegation call's outcome."""
    result = await stream.result()
    if result.finish_reason == "abandoned":  # the sub-run's claim was taken over: so is ours
        assert isinstance(result.error, LeaseLost)
        raise result.error
    if result.finish_reason == "suspended":
        return Outcome(
            status="delegated", inner_run_id=result.run_id, inner_pending=list(result.pending)
        )
    if result.finish_reason == "error":
        error = result.error
        message = str(error) if isinstance(error, AgentError) else repr(error)
        return Outcome.error(f"sub-agent failed: {message}")
    return Outcome(status="ok", result=result.text)
