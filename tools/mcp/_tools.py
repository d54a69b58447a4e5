"""``MCPTool``: a countersign ``Tool`` backed by one tool of an MCP server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from tools._context import ToolContext
from tools._tool import Tool
from tools.mcp._errors import MCPToolFailed
from tools.mcp._names import mcp_tool_name
from tools.mcp._output import DEFAULT_MAX_BYTES, capped, content_for_model

if TYPE_CHECKING:  # the MCP SDK is imported by a server's connection, not by this module
    import mcp.types as mcp_types


class CallTool(Protocol):
    """``(server tool name, arguments, idempotent=...) -> result``: how a tool reaches its
    server (``idempotent``: the call may be sent again on a new session if the first was lost)."""

    def __call__(
        self, tool: str, arguments: dict[str, Any], *, idempotent: bool = ...
    ) -> Awaitable[mcp_types.CallToolResult]: ...


class MCPArguments(BaseModel):
    """Accepts any JSON object: the server validates against its own ``inputSchema``."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, kw_only=True)
class MCPTool(Tool):
    """A ``Tool`` whose calls go to an MCP server; ``parameters_schema()`` is the server's."""

    server: str = ""
    """The name of the MCP server it belongs to (``github``)."""
    remote_name: str = ""
    """The tool's own name on the server (``create_issue``)."""
    annotations: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """The server's annotations as sent (``{"readOnlyHint": true, ...}``); empty when none."""

    def definition(self) -> dict[str, Any]:
        """The tool's id, description and the server's input schema, plus the server's name
        and the annotations: a server that changes any of them changes the digest."""
        annotations = dict(self.annotations)
        return {**super().definition(), "annotations": annotations, "server": self.server}

    @property
    def destructive(self) -> bool:
        """MCP's defaults: ``destructiveHint`` true and ``readOnlyHint`` false unless said."""
        hints = self.annotations
        return hints.get("readOnlyHint") is not True and hints.get("destructiveHint") is not False

    def approval_reason(self) -> str:
        """Which annotation made the call gated (SPEC 14: only ``readOnlyHint: true`` is not)."""
        if not self.annotations:
            return f"MCP tool of {self.server} without annotations (it may change things)"
        if self.destructive:
            return "Destructive MCP tool (no readOnlyHint)"
        return "MCP tool that may change things (no readOnlyHint)"


def build_tool(
    server: str,
    remote: mcp_types.Tool,
    call: CallTool,
    *,
    output_max_bytes: int = DEFAULT_MAX_BYTES,
) -> MCPTool:
    """Turn a listed MCP tool into an ``MCPTool`` gated by its annotations.

    ``readOnlyHint: true`` needs no approval; anything else (destructive, or no annotations)
    does. ``idempotentHint: true`` makes it ``idempotent``. Results reach the model cut to
    ``output_max_bytes`` (``tools.mcp._output``).
    """
    hints = remote.annotations
    annotations = {} if hints is None else hints.model_dump(by_alias=True, exclude_none=True)
    read_only = hints is not None and hints.read_only_hint is True
    title = (hints.title if hints is not None else None) or remote.title
    remote_name = remote.name
    idempotent = hints is not None and hints.idempotent_hint is True

    async def execute(input: MCPArguments, ctx: ToolContext) -> Any:
        result = await call(remote_name, input.model_dump(), idempotent=idempotent)
        return await to_tool_result(server, remote_name, result, max_bytes=output_max_bytes)

    return MCPTool(
        id=mcp_tool_name(server, remote.name),
        description=remote.description or title or remote.name,
        input_schema=MCPArguments,
        json_schema=dict(remote.input_schema),
        execute=execute,
        require_approval=not read_only,
        idempotent=idempotent,
        title=title,
        server=server,
        remote_name=remote.name,
        annotations=annotations,
    )


async def to_tool_result(
    server: str,
    tool: str,
    result: mcp_types.CallToolResult,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Any:
    """Structured content when there is some, else the text (or the content blocks as JSON,
    binary ones described); cut to ``max_bytes``. A large result is measured and cut in a
    worker thread, so encoding megabytes never holds up the event loop (other threads' acks)."""
    import mcp.types as mcp_types

    if result.is_error:
        detail = _text(result.content) or "the server reported an error"
        raise MCPToolFailed(server, tool, capped(detail, max_bytes))
    if result.structured_content is not None:
        shown: Any = result.structured_content
    elif all(isinstance(block, mcp_types.TextContent) for block in result.content):
        shown = _text(result.content)
    else:
        shown = [content_for_model(block) for block in result.content]
    if isinstance(shown, str) and len(shown) <= max_bytes // 4:
        return shown  # short text: no encoding needed to know it fits
    if _rough_size(shown) > _IN_THREAD_ABOVE:
        return await asyncio.to_thread(capped, shown, max_bytes)
    return capped(shown, max_bytes)


_IN_THREAD_ABOVE = 256 * 1024
"""Results larger than this (roughly) are measured and cut in a worker thread."""


def _rough_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_rough_size(item) for item in value)
    if isinstance(value, dict):
        return sum(len(str(k)) + _rough_size(v) for k, v in value.items())
    return 16


def _text(content: list[mcp_types.ContentBlock]) -> str:
    import mcp.types as mcp_types

    return "\n".join(block.text for block in content if isinstance(block, mcp_types.TextContent))
