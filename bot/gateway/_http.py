"""``/mcp`` on the bot's own aiohttp app: the gateway's MCP server over Streamable HTTP.

Every request needs ``Authorization: Bearer <token>``, a person's token from ``API_TOKENS``
(SPEC 7, 17): no token or an unknown one is 401 (``WWW-Authenticate: Bearer``), the service
token is 403 (a gateway call is requested by a person), and nothing reaches the MCP server.
The person goes into the request as the SDK's ``AuthenticatedUser``, so the SDK's session
manager also keeps each session to the person who opened it. The session manager (the SDK's
``StreamableHTTPSessionManager``) runs while ``running()`` is entered.

Example:
    >>> http = GatewayHTTP(GatewayMCP(gateway, hold_seconds=45), ApiAccess.of(settings))
    >>> http.install(web_app)  # doctest: +SKIP
    >>> async with http.running(): ...  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator

from aiohttp import web
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

import bot.api._errors as api_errors
from bot.api import ApiAccess
from bot.gateway._asgi import Scope, asgi_handler
from bot.gateway._mcp import GatewayMCP

MCP_PATH = "/mcp"
"""Where MCP clients connect (``http://HOST:PORT/mcp``)."""
PERSON = web.RequestKey("countersign.gateway.person", str)

UNAUTHORIZED = (
    "send Authorization: Bearer <token>, your own token from the bot's API_TOKENS file (the "
    "gateway's calls are requested by the person it identifies)"
)
SERVICE_TOKEN = (
    "this is the service token (API_TOKEN), which is no one: MCP clients send a person's "
    "token from API_TOKENS"
)


class GatewayHTTP:
    """The gateway's MCP server mounted at ``/mcp`` (see the module docstring)."""

    def __init__(self, endpoint: GatewayMCP, access: ApiAccess | None) -> None:
        self.endpoint = endpoint
        self._access = access
        self.manager = StreamableHTTPSessionManager(app=endpoint.server)
        self._asgi = asgi_handler(self.manager.handle_request, scope_hook=_with_person)

    def install(self, app: web.Application) -> None:
        """Serve ``/mcp`` on ``app`` (every method: POST, GET's event stream, DELETE)."""
        app.router.add_route("*", MCP_PATH, self._handle)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[GatewayHTTP]:
        """The session manager, running (sessions end when this is left). It runs in a task
        of its own: its task group must be left by the task that entered it, and whoever
        serves the bot may enter and leave this from different tasks (a test fixture does)."""
        started, stop = asyncio.Event(), asyncio.Event()

        async def run() -> None:
            async with self.manager.run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(run(), name="mcp-sessions")
        waiting = asyncio.ensure_future(started.wait())
        await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if task.done():
            task.result()  # it could not start: say why
        try:
            yield self
        finally:
            stop.set()
            await task

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        caller = None
        if scheme.lower() == "bearer" and token.strip() and self._access is not None:
            caller = self._access.caller(token.strip())
        if caller is None:
            challenge = 'Bearer realm="countersign"' + (', error="invalid_token"' if header else "")
            return web.json_response(
                {"code": api_errors.UNAUTHORIZED, "message": UNAUTHORIZED},
                status=401,
                headers={"WWW-Authenticate": challenge},
            )
        if caller.user is None:
            return web.json_response(
                {"code": api_errors.PERSON_TOKEN_REQUIRED, "message": SERVICE_TOKEN}, status=403
            )
        request[PERSON] = caller.user
        return await self._asgi(request)


def _with_person(request: web.Request, scope: Scope) -> None:
    """The person as the SDK's authenticated user: its handlers read it, and its session
    manager refuses a session to anyone but the person who opened it."""
    person = request[PERSON]
    token = hashlib.sha256(request.headers.get("Authorization", "").encode()).hexdigest()
    scope["user"] = AuthenticatedUser(AccessToken(token=token, client_id=person, scopes=[]))
