"""The MCP server the gateway serves (SPEC 17), built on the official SDK's low-level ``Server``.

``tools/list`` lists every tool of the policy file's ``[[mcp_servers]]`` as ``tools.mcp`` names
them (``<server>_<tool>``, with the server's input schema, title and annotations); a change of
a server's list (``list_changed``, a restart) is passed on to every connected client.
``tools/call`` puts the call through the gateway as the person the client's token identifies
(the HTTP layer puts it in the request: ``bot.gateway._http``) and answers with the server's
own result, or with an ``isError`` result saying it is waiting (and where), declined (by whom,
why), expired, or failed.

Example:
    >>> endpoint = GatewayMCP(gateway, hold_seconds=45)  # doctest: +SKIP
    >>> manager = StreamableHTTPSessionManager(app=endpoint.server)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

import mcp.types as mcp_types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from pydantic import ValidationError

import bot.gateway._messages as msg
from bot.gateway._gateway import Answer, Ask, Gateway, Origin
from tools.mcp import MCPTool

logger = logging.getLogger(__name__)

SERVER_NAME = "countersign"
INSTRUCTIONS = (
    "Tools served through countersign: a call its policy holds waits for a person to approve "
    "it in Slack. When a result says the call is waiting, call the same tool with the same "
    "arguments again later to get its outcome."
)
SESSION_HEADER = "mcp-session-id"
SESSIONS_REMEMBERED = 10_000
"""Sessions told of a tool list change (the most recently active; the SDK's own limit)."""


class _Server(Server[Any]):
    """The SDK's server, announcing that its tool list may change (it does: SPEC 14)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class GatewayMCP:
    """The gateway's MCP server (see the module docstring)."""

    def __init__(self, gateway: Gateway, *, hold_seconds: float) -> None:
        self.gateway = gateway
        self.hold_seconds = hold_seconds
        self.server = _Server(
            SERVER_NAME,
            version="1",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()

    async def tools_changed(self) -> None:
        """Tell every connected client that the tool list changed."""
        for session_id, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client went away: forget its session
                self._sessions.pop(session_id, None)

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        request = ctx.request
        session_id = getattr(request, "headers", {}).get(SESSION_HEADER) if request else None
        if session_id:
            self._sessions[session_id] = ctx.session
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > SESSIONS_REMEMBERED:  # ended ones are never said so
                self._sessions.popitem(last=False)

    def _mcp_tools(self) -> dict[str, MCPTool]:
        tools = self.gateway.tools.current_tools()
        return {name: tool for name, tool in tools.items() if isinstance(tool, MCPTool)}

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        self._remember(ctx)
        return mcp_types.ListToolsResult(
            tools=[_listed(name, tool) for name, tool in sorted(self._mcp_tools().items())]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        self._remember(ctx)
        person = _person(ctx)
        tool = self._mcp_tools().get(params.name)
        if person is None or tool is None:  # no person: never (the HTTP layer checks first)
            return _error(msg.UNKNOWN_TOOL.format(tool=params.name))
        info = ctx.session.client_params
        client = info.client_info.name if info is not None else "an MCP client"
        answer = await self.gateway.ask(
            Ask(
                person=person,
                tool=params.name,
                args=dict(params.arguments or {}),
                origin=Origin(kind="mcp", client=client, server=tool.server),
                wait_seconds=self.hold_seconds,
            )
        )
        return tool_result(answer)


def _listed(name: str, tool: MCPTool) -> mcp_types.Tool:
    annotations = (
        mcp_types.ToolAnnotations.model_validate(dict(tool.annotations))
        if tool.annotations
        else None
    )
    return mcp_types.Tool(
        name=name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.shared_parameters_schema,
        annotations=annotations,
    )


def _person(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The person the request's token identified (set by ``bot.gateway._http``)."""
    request = ctx.request
    user = request.scope.get("user") if request is not None else None
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None


def tool_result(answer: Answer) -> mcp_types.CallToolResult:
    """What the client is told: the server's own result, or an ``isError`` result saying why
    there is none (yet)."""
    if answer.status in ("allowed", "approved") and answer.result is not None:
        try:
            return mcp_types.CallToolResult.model_validate(answer.result)
        except ValidationError:
            logger.warning("gateway: a stored result is no CallToolResult; sent as text")
            return _error(str(answer.result))
    return _error(explain(answer))


def explain(answer: Answer) -> str:
    """Why a call has no result (yet), in a sentence for the client and its model."""
    who = answer.decided_by or msg.NOBODY
    if answer.status == "pending":
        where = msg.WHERE_CARD.format(card=answer.card) if answer.card else msg.WHERE_SLACK
        return msg.WAITING.format(where=where)
    if answer.status == "declined" and answer.withdrawn:
        return msg.WITHDRAWN.format(who=who)
    if answer.status == "declined":
        why = msg.WHY.format(reason=answer.reason) if answer.reason else ""
        return msg.DECLINED.format(who=who, why=why)
    if answer.status == "expired":
        return msg.EXPIRED
    if answer.interrupted:
        return msg.INTERRUPTED
    if answer.error == "gone":
        return msg.GONE
    return msg.FAILED.format(error=answer.error or "no result")


def _error(text: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=True
    )
