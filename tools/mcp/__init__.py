"""Model Context Protocol servers as countersign tools (SPEC 14).

Example:
    >>> from tools.mcp import MCPServer
    >>> async def main() -> None:
    ...     async with MCPServer.http("github", "http://127.0.0.1:8080/mcp") as server:
    ...         tools = await server.list_tools()   # Tools named github_<tool>

Gating follows each tool's annotations: ``readOnlyHint: true`` needs no approval, anything
else (destructive, or no annotations) needs approval; ``idempotentHint: true`` makes the tool
``idempotent``.
"""

from tools.mcp._errors import (
    MCPServerError,
    MCPServerUnavailable,
    MCPToolFailed,
    MissingEnvironmentVariable,
)
from tools.mcp._names import MAX_NAME_LENGTH, mcp_tool_name
from tools.mcp._server import MCPServer
from tools.mcp._tools import MCPArguments, MCPTool

__all__ = [
    "MAX_NAME_LENGTH",
    "MCPArguments",
    "MCPServer",
    "MCPServerError",
    "MCPServerUnavailable",
    "MCPTool",
    "MCPToolFailed",
    "MissingEnvironmentVariable",
    "mcp_tool_name",
]
