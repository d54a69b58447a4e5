"""Model Context Protocol servers as countersign tools (SPEC 14).

Example:
    >>> from tools.mcp import MCPServer
    >>> async def main() -> None:
    ...     async with MCPServer.http("github", "http://127.0.0.1:8080/mcp") as server:
    ...         tools = await server.list_tools()   # Tools named github_<tool>

Gating follows each tool's annotations: ``readOnlyHint: true`` needs no approval, anything
else (destructive, or no annotations) needs approval; ``idempotentHint: true`` makes the tool
``idempotent``. Every call has a timeout (``call_timeout``, raising ``MCPCallTimedOut`` and
resetting the session) and results reach the model cut to ``output_max_bytes``, binary content
described rather than sent as base64.
"""

from typing import TYPE_CHECKING

from tools.mcp._defaults import DEFAULT_CALL_TIMEOUT
from tools.mcp._errors import (
    MCPCallTimedOut,
    MCPServerError,
    MCPServerUnavailable,
    MCPToolFailed,
    MissingEnvironmentVariable,
)
from tools.mcp._names import MAX_NAME_LENGTH, mcp_tool_name
from tools.mcp._output import DEFAULT_MAX_BYTES
from tools.mcp._tools import MCPArguments, MCPTool

if TYPE_CHECKING:
    from tools.mcp._server import MCPServer

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_BYTES",
    "MAX_NAME_LENGTH",
    "MCPArguments",
    "MCPCallTimedOut",
    "MCPServer",
    "MCPServerError",
    "MCPServerUnavailable",
    "MCPTool",
    "MCPToolFailed",
    "MissingEnvironmentVariable",
    "mcp_tool_name",
]


def __getattr__(name: str) -> object:
    """Import ``MCPServer`` (and the MCP SDK) only when it is used: a configuration without
    MCP servers never loads the SDK."""
    if name == "MCPServer":
        from tools.mcp._server import MCPServer

        return MCPServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
