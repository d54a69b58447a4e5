"""The policy file's ``[[mcp_servers]]`` (SPEC 14): started with the bot, kept running.

``mcp_servers(entries, environ, taken=...)`` is an async context manager yielding
``MCPTools``: the servers, and ``tools``, a ``ToolGroups`` (one group per server) that the
served agent reads at each model turn (``ServedParts(tools=...)``). On entry it starts every
server at once and puts its tools (``<server>_<tool>``) in its group; a server that cannot
start is one warning line (no traceback) and the bot serves without its tools. Then a watcher
task per server:

- a server that died (or never started) is restarted with backoff, 0.5 s doubling up to 30 s;
  ``tools.mcp`` reports the outage once and logs the reconnection;
- when a server says its tool list changed, the list is fetched again and its group replaced
  (nothing in the agent changes: it reads the group).

Calls to a server's tools while it is down fail with ``MCPServerUnavailable``, which the model
sees. On exit the watchers stop and the servers are closed (stdio processes stopped).

Example:
    >>> async with mcp_servers(settings.policy.mcp_servers, settings.mcp_environ,
    ...                        taken=agent.tools) as mcp:  # doctest: +SKIP
    ...     served = serve_agent(agent, ..., tools=mcp.tools)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents import AgentConfigError, ToolGroups
from bot.policy import MCPServerEntry
from tools.mcp import DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_BYTES, MCPServerError

if TYPE_CHECKING:  # the MCP SDK is imported when a server is configured (build_server)
    from tools.mcp import MCPServer

logger = logging.getLogger(__name__)

FIRST_RESTART_DELAY = 0.5
"""Seconds before restarting a server that is down; doubles up to ``MAX_RESTART_DELAY``."""
MAX_RESTART_DELAY = 30.0


@dataclass(frozen=True, kw_only=True)
class CallLimits:
    """What every server's calls are held to, from the settings (SPEC 14)."""

    timeout_seconds: float = DEFAULT_CALL_TIMEOUT
    """``MCP_CALL_TIMEOUT_SECONDS``; an entry's ``timeout_seconds`` wins for its server."""
    output_max_bytes: int = DEFAULT_MAX_BYTES
    """``TOOL_OUTPUT_MAX_BYTES``."""


def build_server(
    entry: MCPServerEntry, environ: Mapping[str, str], limits: CallLimits | None = None
) -> MCPServer:
    """The ``MCPServer`` for one entry; ``${VAR}`` values come from ``environ``."""
    from tools.mcp import MCPServer

    limits = limits or CallLimits()
    timeout = entry.timeout_seconds or limits.timeout_seconds
    if entry.command is not None:
        return MCPServer.stdio(
            entry.name,
            entry.command,
            entry.env or None,
            environ=environ,
            call_timeout=timeout,
            output_max_bytes=limits.output_max_bytes,
        )
    assert entry.url is not None
    return MCPServer.http(
        entry.name,
        entry.url,
        entry.headers,
        environ=environ,
        call_timeout=timeout,
        output_max_bytes=limits.output_max_bytes,
    )


@dataclass(frozen=True, kw_only=True)
class MCPTools:
    """The running servers and their tools."""

    servers: list[MCPServer]
    """The servers started (a server that could not start is retried in the background)."""
    tools: ToolGroups
    """Every server's current tools, one group per server: the served agent's tool source."""
    listeners: list[Listener] = field(default_factory=list)
    """Told each time a server's tools were listed again after the start (its list changed,
    or it restarted): the gateway tells its own clients (SPEC 17)."""


Listener = Callable[[], Awaitable[None]]
"""Called (and awaited) after a server's tools were listed again; one that fails is logged."""


class _Served:
    """One server and its group of tools."""

    def __init__(self, server: MCPServer, tools: ToolGroups, listeners: list[Listener]) -> None:
        self.server = server
        self.tools = tools
        self.listeners = listeners

    async def start(self) -> None:
        try:
            await self.server.connect()
            await self.refresh()
        except Exception as exc:  # one line, no traceback: the bot serves on
            logger.warning(
                "MCP server %s could not be started (%s); serving without its tools, "
                "retrying in the background",
                self.server.name,
                exc,
            )

    async def refresh(self) -> None:
        """List the tools (reconnecting if needed) and replace the server's group."""
        tools = await self.server.list_tools()
        try:
            self.tools.replace(self.server.name, tools)
        except AgentConfigError as exc:
            logger.warning("MCP server %s: its tools were not added (%s)", self.server.name, exc)

    async def watch(self) -> None:
        """Forever: wait for a change (died, list changed), then refresh with backoff."""
        delay = FIRST_RESTART_DELAY
        while True:
            await self.server.wait_changed()
            try:
                await self.refresh()
            except Exception:  # reported once by tools.mcp; try again later
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RESTART_DELAY)
            else:
                delay = FIRST_RESTART_DELAY
                await self._tell()

    async def _tell(self) -> None:
        for listener in list(self.listeners):
            try:
                await listener()
            except Exception:
                logger.exception("MCP server %s: a tool-list listener failed", self.server.name)


@contextlib.asynccontextmanager
async def mcp_servers(
    entries: Sequence[MCPServerEntry],
    environ: Mapping[str, str],
    limits: CallLimits | None = None,
    *,
    taken: Collection[str] = (),
    extra: Sequence[MCPServer] = (),
) -> AsyncIterator[MCPTools]:
    """Start ``entries`` (and the ``extra`` servers given built: the local workspace's demo
    server) and keep them running; yields them with their tools, whose names may not be one of
    ``taken`` (the served agent's own tools)."""
    tools = ToolGroups(taken=taken)
    listeners: list[Listener] = []
    served: list[_Served] = []
    for entry in entries:
        try:
            served.append(_Served(build_server(entry, environ, limits), tools, listeners))
        except MCPServerError as exc:  # e.g. a ${VAR} that is not set
            logger.warning("MCP server %s could not be started (%s)", entry.name, exc)
    served.extend(_Served(server, tools, listeners) for server in extra)
    await asyncio.gather(*(one.start() for one in served))
    watchers = [asyncio.create_task(one.watch(), name=f"mcp:{one.server.name}") for one in served]
    try:
        yield MCPTools(servers=[one.server for one in served], tools=tools, listeners=listeners)
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        await asyncio.gather(*(one.server.close() for one in served))
