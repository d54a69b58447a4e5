"""A call run at once when the gate holds nothing, with no run stored (``Agent.run_if_ungated``).

For a caller that forwards one call and waits for its result (the gateway in front of an MCP
client): the same proposal gates as a run's call (``agents.gate.propose``) and the same executor
(hooks, span, observers, a raise turned into an error result); only the run around it is left
out, since nothing of it would be read again: no snapshot, no memory, no model turn. A call the
gate holds (a standing grant may still approve it) goes through ``Agent.stream`` as any call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents._ids import new_id
from agents._messages import ToolCallPart
from agents._runtime import Runtime
from agents.gate import Proposal, propose
from agents.running._executor import Executor


@dataclass(frozen=True, kw_only=True)
class RanAtOnce:
    """What a call run at once came to."""

    tool_call_id: str
    """The id it ran under (its tool's ``ToolContext.tool_call_id``)."""
    result: Any
    """The tool's result; ``{"error": "..."}`` when it failed (as a run's model is told)."""
    failed: bool
    """It raised, or its arguments did not validate."""


async def run_if_ungated(
    rt: Runtime,
    tool_name: str,
    args: dict[str, Any],
    *,
    requested_by: str | None,
    resource_id: str | None,
    request_context: Mapping[str, Any] | None,
) -> RanAtOnce | None:
    """Run the call now when the gate holds nothing; None when it would wait (or is a
    sub-agent's, or a tool that may ask for data: those need a run)."""
    tool = rt.tools.get(tool_name)
    if tool is None or rt.delegate_for(tool_name) is not None or tool.suspend_schema is not None:
        return None
    state, rule = rt.start_state(
        thread_id=None,
        resource_id=resource_id,
        require_tool_approval=None,
        max_steps=None,
        request_context=request_context,
        auto_resume=False,
        requested_by=requested_by,
    )
    call = ToolCallPart(id=new_id(), name=tool_name, args=args)
    if (await propose(Proposal.of_call(rt, call, state, rule))).held:
        return None
    outcome = await Executor(rt).execute(state, call.id, tool_name, args)
    result = outcome.result
    if outcome.status == "suspended":  # asked for data with no schema saying it might
        result = {"error": f"{tool_name} asked for more data, which a call run at once cannot"}
    return RanAtOnce(tool_call_id=call.id, result=result, failed=outcome.status != "ok")
