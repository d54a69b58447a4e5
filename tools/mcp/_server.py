"""``MCPServer``: connects to one MCP server and offers its tools as countersign ``Tool``s."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

import httpx2
import mcp.types as mcp_types
from mcp import StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from tools._errors import ToolDefinitionError
from tools.mcp._connection import Connection, Transport
from tools.mcp._defaults import DEFAULT_CALL_TIMEOUT
from tools.mcp._errors import MCPCallTimedOut, MCPServerUnavailable, MCPToolFailed
from tools.mcp._names import expand, is_safe_server_name
from tools.mcp._output import DEFAULT_MAX_BYTES
from tools.mcp._tools import MCPTool, build_tool

logger = logging.getLogger(__name__)

FIRST_RETRY_DELAY = 0.5
"""Seconds before the first reconnection attempt after a failed one; doubles up to the max."""
MAX_RETRY_DELAY = 30.0
_MAX_PAGES = 100


class MCPServer:
    """One MCP server, over stdio or streamable HTTP; its tools become countersign ``Tool``s.

    Example:
        >>> async def main() -> None:
        ...     server = MCPServer.stdio("github", ["github-mcp-server", "stdio"],
        ...                              env={"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
        ...                              environ={"GITHUB_TOKEN": "ghp_..."})
        ...     async with server:
        ...         tools = await server.list_tools()   # github_create_issue, ...

    Tools keep working across a server restart: a call after the connection dropped
    reconnects first (attempts back off from 0.5 s up to 30 s while it stays down, and each
    call meanwhile fails with ``MCPServerUnavailable``, which the model sees).
    """

    def __init__(
        self,
        name: str,
        transport: Transport,
        *,
        connect_timeout: float = 10.0,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        output_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        """Prefer ``MCPServer.stdio`` or ``MCPServer.http``.

        ``call_timeout``: seconds a tool call may take before it fails with
        ``MCPCallTimedOut`` and the session is reset; ``output_max_bytes``: how much of a
        result the model is given (the rest is cut, with a note).
        """
        if call_timeout <= 0 or output_max_bytes <= 0:
            raise ToolDefinitionError(
                f"MCP server {name!r}: call_timeout and output_max_bytes must be positive"
            )
        if not is_safe_server_name(name):
            raise ToolDefinitionError(
                f"MCP server name {name!r} must be 1-32 letters, digits, '_' or '-' "
                "(it prefixes the tool names the model sees)"
            )
        self.name = name
        """The server's name; it prefixes its tools' names (``github_create_issue``)."""
        self._transport = transport
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._output_max_bytes = output_max_bytes
        self._connection: Connection | None = None
        self._lock = asyncio.Lock()
        self._tools: list[MCPTool] | None = None
        self._retry_at = 0.0
        self._retry_delay = FIRST_RETRY_DELAY
        self._outage_reported = False
        self._changed = asyncio.Event()

    @classmethod
    def stdio(
        cls,
        name: str,
        command: Sequence[str],
        env: Mapping[str, str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        cwd: str | None = None,
        connect_timeout: float = 10.0,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        output_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> MCPServer:
        """A server run as a subprocess speaking MCP on stdin/stdout.

        ``env`` values may name variables (``"${GITHUB_TOKEN}"``), replaced from ``environ``
        (the caller's configuration; tools never read ``os.environ``). A name that ``environ``
        lacks raises ``MissingEnvironmentVariable``.
        """
        if not command:
            raise ToolDefinitionError(f"MCP server {name!r}: command must not be empty")
        params = StdioServerParameters(
            command=command[0],
            args=list(command[1:]),
            env=expand(name, env, environ or {}, "env") if env else None,
            cwd=cwd,
        )

        def transport() -> AbstractAsyncContextManager[TransportStreams]:
            return stdio_client(params)

        return cls._over(name, transport, connect_timeout, call_timeout, output_max_bytes)

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        output_max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> MCPServer:
        """A server reached over streamable HTTP at ``url``; header values may name variables."""
        resolved = expand(name, headers, environ or {}, "header")

        @contextlib.asynccontextmanager
        async def transport() -> AsyncIterator[TransportStreams]:
            timeout = httpx2.Timeout(30.0, read=300.0)
            async with (
                httpx2.AsyncClient(headers=resolved, timeout=timeout) as http,
                streamable_http_client(url, http_client=http) as streams,
            ):
                yield streams

        return cls._over(name, transport, connect_timeout, call_timeout, output_max_bytes)

    @classmethod
    def _over(
        cls,
        name: str,
        transport: Transport,
        connect_timeout: float,
        call_timeout: float,
        output_max_bytes: int,
    ) -> MCPServer:
        """The server over ``transport``: ``stdio`` and ``http`` differ only in the transport."""
        return cls(
            name,
            transport,
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            output_max_bytes=output_max_bytes,
        )

    async def __aenter__(self) -> MCPServer:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Connect now (``async with`` does it); raises ``MCPServerUnavailable`` when it cannot.

        A failure here is the caller's to report (nothing is logged); if the server comes up
        later, its reconnection is logged.
        """
        self._retry_at = 0.0
        await self._live(report=False)

    async def wait_changed(self) -> None:
        """Return once the tools may differ from the last ``list_tools()``: the server said its
        list changed, or the connection ended (or is not up). A host then calls ``list_tools()``
        again, which reconnects (the bot does this to restart a server that died)."""
        while True:
            connection = self._connection
            if connection is None or connection.ended.is_set() or self._tools is None:
                return
            self._changed.clear()
            waits = [asyncio.ensure_future(e.wait()) for e in (connection.ended, self._changed)]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()

    async def close(self) -> None:
        """Disconnect (a stdio server process is stopped). Calls after this reconnect."""
        async with self._lock:
            connection, self._connection = self._connection, None
            self._tools = None
        if connection is not None:
            await connection.close()

    async def list_tools(self) -> list[MCPTool]:
        """The server's tools as ``Tool``s (cached until the server says they changed or the
        connection ends)."""
        live = self._connection is not None and not self._connection.ended.is_set()
        if self._tools is not None and live:
            return list(self._tools)
        connection = await self._live()
        listed: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._request(
                connection, lambda c=cursor: connection.client.list_tools(cursor=c)
            )
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        tools = [
            build_tool(self.name, remote, self.call_tool, output_max_bytes=self._output_max_bytes)
            for remote in listed
        ]
        if connection is self._connection:
            self._tools = tools
        return list(tools)

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, idempotent: bool = False
    ) -> mcp_types.CallToolResult:
        """Call ``tool`` (the server's own name); reconnects first when the server restarted.

        A session the server no longer knows (``Session not found``: it restarted over HTTP)
        is reopened once and the call sent again: the server refused it before dispatching
        anything. A connection lost during the call is retried the same way only for an
        ``idempotent`` tool (it may have reached the server); otherwise it fails with
        ``MCPServerUnavailable`` saying so, never silently.
        No answer within ``call_timeout`` raises ``MCPCallTimedOut`` and resets the session
        (the connection is closed: a stdio server is stopped, and the next call reconnects).
        """
        try:
            return await self._call_once(tool, arguments)
        except _SessionLost as lost:
            if not (lost.never_received or idempotent):
                raise lost.error from None
            logger.info("MCP server %s: %s; reopened the session, calling again", self.name, lost)
        try:
            return await self._call_once(tool, arguments)
        except _SessionLost as lost:
            raise lost.error from None

    async def _call_once(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        connection = await self._live()
        try:
            async with asyncio.timeout(self._call_timeout):
                result: mcp_types.CallToolResult = await self._request(
                    connection, lambda: connection.client.call_tool(tool, arguments)
                )
            return result
        except MCPError as exc:
            if _unknown_session(exc):
                await self._drop(connection, "the server no longer knows the session", quiet=True)
                raise _SessionLost(
                    MCPServerUnavailable(
                        self.name,
                        f"the server lost the session ({exc.error.message}); the call "
                        f"{tool!r} was not run",
                    ),
                    never_received=True,
                ) from None
            raise MCPToolFailed(self.name, tool, exc.error.message) from None
        except TimeoutError:
            await self._drop(connection, f"tool {tool!r} did not answer in time")
            raise MCPCallTimedOut(self.name, tool, self._call_timeout) from None
        except MCPServerUnavailable as exc:  # the connection was lost during the call
            raise _SessionLost(exc, never_received=False) from None

    async def _request(self, connection: Connection, send: Any) -> Any:
        try:
            return await send()
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED and not connection.ended.is_set():
                raise
            await self._drop(connection, "the connection was lost during the request")
            raise MCPServerUnavailable(
                self.name,
                "the connection was lost during the request (it may have reached the server); "
                "it reconnects on the next call",
            ) from None
        except (OSError, httpx2.HTTPError) as exc:
            await self._drop(connection, str(exc))
            raise MCPServerUnavailable(self.name, f"{type(exc).__name__}: {exc}") from None

    async def _live(self, *, report: bool = True) -> Connection:
        async with self._lock:
            if self._connection is not None and not self._connection.ended.is_set():
                return self._connection
            if self._connection is not None:
                self._report_outage("the connection ended (the server stopped?)")
                stale, self._connection = self._connection, None
                await stale.close()
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                raise MCPServerUnavailable(
                    self.name, f"it could not be reached; next reconnection attempt in {wait:.1f}s"
                )
            try:
                self._connection = await Connection.open(
                    self._transport, self._on_message, self._connect_timeout
                )
            except Exception as exc:
                reason = _describe(exc)
                if report:
                    self._report_outage(reason)
                self._outage_reported = True  # reported by us or by the caller of connect()
                self._retry_at = time.monotonic() + self._retry_delay
                self._retry_delay = min(self._retry_delay * 2, MAX_RETRY_DELAY)
                raise MCPServerUnavailable(
                    self.name, f"it could not be started or reached: {reason}"
                ) from None
            if self._outage_reported:
                logger.info("MCP server %s: reconnected", self.name)
            self._tools = None
            self._outage_reported = False
            self._retry_delay = FIRST_RETRY_DELAY
            return self._connection

    async def _drop(self, connection: Connection, reason: str, *, quiet: bool = False) -> None:
        async with self._lock:
            if self._connection is connection:
                self._connection = None
                if not quiet:
                    self._report_outage(reason)
        await connection.close()

    def _report_outage(self, reason: str) -> None:
        if not self._outage_reported:
            self._outage_reported = True
            logger.warning(
                "MCP server %s is down (%s); reconnecting with backoff", self.name, reason
            )

    def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools = None
            self._changed.set()


class _SessionLost(Exception):
    """The call's session is gone: ``error`` says so; ``never_received``: the server refused
    it before dispatching (safe to send again on a new session)."""

    def __init__(self, error: MCPServerUnavailable, *, never_received: bool) -> None:
        super().__init__(error.reason)
        self.error = error
        self.never_received = never_received


_SESSION_GONE = ("session not found", "session terminated")
"""What the SDK's streamable HTTP server and client say of a session id the server does not
know (HTTP 404): it restarted, or expired the session."""


def _unknown_session(exc: MCPError) -> bool:
    return exc.error.message.strip().lower() in _SESSION_GONE


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, TimeoutError):
        return "no answer to the MCP handshake in time"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
