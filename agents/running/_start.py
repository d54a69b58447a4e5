"""Starting a run from a new user message (or auto-resuming the call it answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents._messages import ToolCallPart
from agents._results import SuspendedRunsPage, ToolCallRecord
from agents._runtime import Runtime
from agents.running._auto_resume import try_auto_resume
from agents.running._run import Run
from agents.running._stream import AgentStream
from tools import ApprovalPredicate


async def start(
    rt: Runtime,
    message: str,
    *,
    thread_id: str | None,
    resource_id: str | None,
    require_tool_approval: bool | ApprovalPredicate | None,
    max_steps: int | None,
    request_context: Mapping[str, Any] | None,
    auto_resume_suspended_tools: bool | None,
    decided_by: str | None,
    requested_by: str | None = None,
    approval_ttl_seconds: float | None = None,
    suspended_runs: SuspendedRunsPage | None = None,
    propose_call: ToolCallRecord | None = None,
) -> AgentStream:
    """Start the run in the background on the agent's runner and return its stream."""
    auto_resume = bool(
        auto_resume_suspended_tools
        if auto_resume_suspended_tools is not None
        else rt.default_options.get("auto_resume_suspended_tools", False)
    )
    if auto_resume and thread_id and propose_call is None:
        resumed = await try_auto_resume(
            rt,
            message,
            thread_id=thread_id,
            resource_id=resource_id,
            decided_by=decided_by,
            listing=suspended_runs,
        )
        if resumed is not None:
            return resumed
    state, approval = rt.start_state(
        thread_id=thread_id,
        resource_id=resource_id,
        require_tool_approval=require_tool_approval,
        max_steps=max_steps,
        request_context=request_context,
        auto_resume=auto_resume,
        requested_by=requested_by,
        approval_ttl_seconds=approval_ttl_seconds,
    )
    run = Run(rt, state, AgentStream(state.run_id), approval_predicate=approval)
    proposed = None
    if propose_call is not None:
        proposed = ToolCallPart(
            id=propose_call.tool_call_id, name=propose_call.tool_name, args=propose_call.args
        )
    rt.runner.submit(run.start(message, proposed), name=f"run-{state.run_id}", bounded=False)
    return run.stream
