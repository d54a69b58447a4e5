"""``GatewayModel``: the gateway agent's model, which is no language model at all.

A gateway call is one run of the gateway agent (SPEC 17): the run's message is the client's
call (``call_message``), the model proposes exactly that call on its first turn, and after the
tool's result it answers nothing. So the call goes through the one gate of the runtime like any
model's call (policy, grants, quorum, expiry, the snapshot, the audit), and nothing in the run
loop knows about the gateway.

Example:
    >>> message = call_message("mcp", "ops_delete_ticket", {"ticket_id": "T-1"})
    >>> agent = Agent(id="gateway", model=GatewayModel(), ...)  # doctest: +SKIP
    >>> await agent.stream(message, requested_by="U1")  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from agents.models import ModelEvent, ModelRequest, ToolCallRequest, Usage

GATEWAY_MODEL_ID = "countersign/gateway"
"""The model id the gateway agent reports."""
CallKind = Literal["mcp", "hook"]
"""Where a gateway call came from: an MCP client's ``tools/call``, or a coding agent's hook."""
CALL_IDS: dict[CallKind, str] = {"mcp": "mcp-call", "hook": "hook-call"}
"""The tool call id of each kind of gateway call (one call per run): a pending call says by its
id alone which kind it is."""


def call_message(kind: CallKind, tool: str, args: dict[str, Any]) -> str:
    """The run's message: the call the model is to propose, as JSON."""
    return json.dumps({"kind": kind, "tool": tool, "arguments": args}, ensure_ascii=False)


def kind_of(tool_call_id: str) -> CallKind | None:
    """The kind of a gateway call from its tool call id (None: not a gateway call's)."""
    return next((kind for kind, known in CALL_IDS.items() if known == tool_call_id), None)


class GatewayModel:
    """Proposes the client's call, then answers nothing (see the module docstring)."""

    @property
    def model_id(self) -> str:
        return GATEWAY_MODEL_ID

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "user" and last.content:
            call = json.loads(last.content)
            yield ToolCallRequest(
                id=CALL_IDS[call["kind"]], name=call["tool"], args=call["arguments"]
            )
        yield Usage()
