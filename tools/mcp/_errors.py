"""Errors raised by ``tools.mcp``; the model sees each as a failed tool call.

ToolError
└── MCPServerError               root of this package's errors (``server_name`` attribute)
    ├── MCPServerUnavailable     the server cannot be started or reached, or the connection was lost
    ├── MCPToolFailed            the server answered the call with an error
    │   └── MCPCallTimedOut      no answer within the call timeout (the session was reset)
    └── MissingEnvironmentVariable   ``${VAR}`` names a variable the given environment lacks
"""

from __future__ import annotations

from tools._errors import ToolError


class MCPServerError(ToolError):
    """Root of every error raised by ``tools.mcp``."""

    def __init__(self, server_name: str, message: str) -> None:
        self.server_name = server_name
        super().__init__(message)


class MCPServerUnavailable(MCPServerError):
    """The MCP server cannot be started or reached (or the connection dropped during a call)."""

    def __init__(self, server_name: str, reason: str) -> None:
        self.reason = reason
        super().__init__(server_name, f"MCP server {server_name!r} is unavailable: {reason}")


class MCPToolFailed(MCPServerError):
    """The server answered a tool call with an error (``isError`` or a protocol error)."""

    def __init__(self, server_name: str, tool_name: str, detail: str) -> None:
        self.tool_name = tool_name
        self.detail = detail
        super().__init__(
            server_name, f"MCP tool {tool_name!r} on server {server_name!r} failed: {detail}"
        )


class MCPCallTimedOut(MCPToolFailed):
    """The server did not answer a call within its timeout; the session was reset (a stdio
    server is restarted on the next call), so nothing later waits behind the stuck call."""

    def __init__(self, server_name: str, tool_name: str, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            server_name,
            tool_name,
            f"no answer within {seconds:g} s (MCP_CALL_TIMEOUT_SECONDS or the server's "
            "timeout_seconds); it may or may not have taken effect, and the session was reset",
        )


class MissingEnvironmentVariable(MCPServerError):
    """A ``${VAR}`` in a server's env or headers names a variable that is not set."""

    def __init__(self, server_name: str, variable: str, where: str) -> None:
        self.variable = variable
        super().__init__(
            server_name,
            f"MCP server {server_name!r}: {where} uses ${{{variable}}} but {variable} is not set; "
            f"set {variable} in the environment given to the server",
        )
