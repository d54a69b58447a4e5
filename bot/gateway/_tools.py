"""The gateway agent's tools (SPEC 17): the MCP servers' tools, and the coding agents' tools.

``GatewayTools`` is the gateway agent's ``ToolSource``:

- every tool of the policy file's ``[[mcp_servers]]`` as ``tools.mcp`` lists it (named
  ``<server>_<tool>``, its definition digest and its annotation-based gating unchanged), whose
  call returns the server's whole ``CallToolResult`` (as JSON data, cut to the output cap) so
  the gateway can hand the client exactly what the server answered;
- one tool per tool name a coding agent's hook asked about (``Bash``, ``Write``,
  ``mcp__github__create_issue``...), registered when first seen (``hook_tool``): it runs in the
  client, so its ``execute`` only records that the call may run, and its gate is the policy
  file's (``HookGate``).

Example:
    >>> tools = GatewayTools(mcp.tools, servers, HookGate(settings.policy))  # doctest: +SKIP
    >>> tools.hook_tool("Bash")  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import mcp.types as mcp_types

from agents import PendingToolCall, ToolSource
from bot.gateway._model import kind_of
from bot.policy import PolicyFile
from bot.policy._match import CompiledRules
from tools import ApprovalContext, Tool, ToolContext, create_tool
from tools.mcp import DEFAULT_MAX_BYTES, MCPArguments, MCPServer, MCPTool

HOOK_PATH = "gateway"
"""The agent path the policy file's ``agents`` globs see for gateway calls."""


class HookGate:
    """Whether a coding agent's call waits for a person (SPEC 17): a call no rule matches
    waits unless ``[gateway] unmatched = "allow"``; a call whose first matching rule says
    ``require_approval = false`` runs at once; any other matching rule holds it (and the
    runtime applies the rest of that rule: approvers, quorum, TTL, grants)."""

    def __init__(self, policy: PolicyFile) -> None:
        self._rules = policy.rules
        self._compiled = CompiledRules(policy.rules)
        self._unmatched_holds = policy.gateway.unmatched == "hold"

    def holds(self, tool: str, args: dict[str, Any]) -> bool:
        """True when the call waits for a person."""
        index = self._compiled.first(tool, tool, HOOK_PATH, args)
        if index is None:
            return self._unmatched_holds
        rule = self._rules[index]
        lets_through = "require_approval" in rule.model_fields_set and not rule.require_approval
        return not lets_through

    def __call__(self, context: ApprovalContext) -> bool:
        return self.holds(context.tool_name, dict(context.args))


async def _allowed(input: MCPArguments, ctx: ToolContext) -> dict[str, Any]:
    """A coding agent's tool runs in the client: here, the call is only allowed to."""
    return {"allowed": True}


class GatewayTools:
    """The gateway agent's ``ToolSource`` (see the module docstring)."""

    def __init__(
        self,
        mcp: ToolSource | None,
        servers: Sequence[MCPServer],
        gate: HookGate,
        *,
        output_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._mcp = mcp
        self._servers = {server.name: server for server in servers}
        self._gate = gate
        self._max_bytes = output_max_bytes
        self._hook: dict[str, Tool] = {}
        self._wrapped: dict[int, tuple[Tool, Tool]] = {}  # id(MCP tool): (it, it wrapped)
        self._seen: Mapping[str, Tool] | None = None
        self._current: Mapping[str, Tool] = MappingProxyType({})

    def current_tools(self) -> Mapping[str, Tool]:
        """The MCP servers' tools as they are now, then the hook tools seen so far."""
        upstream = self._mcp.current_tools() if self._mcp is not None else {}
        if upstream is not self._seen:
            self._seen = upstream
            self._rebuild()
        return self._current

    def is_mcp_tool(self, name: str) -> bool:
        """True when ``name`` is one of the MCP servers' tools now."""
        tool = self.current_tools().get(name)
        return isinstance(tool, MCPTool)

    def saw(self, call: PendingToolCall) -> None:
        """A pending call read anywhere (``ServedAgents``): the hook tool it needs is made, so
        deciding it here runs it even when another instance proposed it."""
        if kind_of(call.tool_call_id) == "hook" and not self.is_mcp_tool(call.tool_name):
            self.hook_tool(call.tool_name)

    def hook_tool(self, name: str) -> Tool:
        """The tool standing for a coding agent's tool ``name`` (made the first time)."""
        known = self._hook.get(name)
        if known is None:
            known = self._hook[name] = create_tool(
                id=name,
                description=f"The coding agent's {name} tool; it runs in the client once allowed",
                input_schema=MCPArguments,
                execute=_allowed,
                require_approval=self._gate,
                idempotent=True,  # recording that a call may run, again, is harmless
                title=name,
            )
            self._rebuild()
        return known

    def _rebuild(self) -> None:
        """The mapping handed out, made again (never changed in place: a turn in progress
        keeps the tools it started with). An MCP tool wrapped once stays the same object."""
        wrapped: dict[int, tuple[Tool, Tool]] = {}
        tools = dict(self._hook)
        for name, tool in (self._seen or {}).items():
            known = self._wrapped.get(id(tool))
            pair = known if known is not None and known[0] is tool else (tool, self._wrap(tool))
            wrapped[id(tool)] = pair
            tools[name] = pair[1]  # an MCP tool wins a name a hook tool has too
        self._wrapped = wrapped
        self._current = MappingProxyType(tools)

    def _wrap(self, tool: Tool) -> Tool:
        """``tool`` calling its server for the whole result (same definition, same digest)."""
        if not isinstance(tool, MCPTool):
            return tool
        return dataclasses.replace(tool, execute=self._caller(tool))

    def _caller(self, tool: MCPTool) -> Any:
        server = self._servers.get(tool.server)
        remote, max_bytes = tool.remote_name, self._max_bytes

        async def execute(input: MCPArguments, ctx: ToolContext) -> dict[str, Any]:
            if server is None:  # listed by a server the gateway was not given: never here
                raise LookupError(f"no MCP server named {tool.server!r} is running")
            result = await server.call_tool(remote, input.model_dump())
            return cap_result(result, max_bytes)

        return execute


def cap_result(result: mcp_types.CallToolResult, max_bytes: int) -> dict[str, Any]:
    """``result`` as JSON data, whole when it fits ``max_bytes``; else its content as one text
    block cut there, with a note saying how much was left out (``TOOL_OUTPUT_MAX_BYTES``)."""
    data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    size = len(json.dumps(data, ensure_ascii=False).encode("utf-8"))
    if size <= max_bytes:
        return data
    text = "\n".join(_text_of(block) for block in result.content)
    encoded = text.encode("utf-8")
    kept = encoded[:max_bytes].decode("utf-8", errors="ignore")
    note = (
        f"\n[countersign: the result was cut here: {size - len(kept.encode('utf-8')):,} of "
        f"{size:,} bytes left out (TOOL_OUTPUT_MAX_BYTES={max_bytes:,})]"
    )
    return {"content": [{"type": "text", "text": kept + note}], "isError": result.is_error}


def _text_of(block: mcp_types.ContentBlock) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    kind = getattr(block, "type", "content")
    mime = getattr(block, "mime_type", None) or "unknown type"
    return f"[{kind}: {mime}, not shown: the result was too large]"
