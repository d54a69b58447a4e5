"""An ASGI application served by an aiohttp handler.

The ``mcp`` SDK's Streamable HTTP transport (``StreamableHTTPSessionManager``) is an ASGI
application; the bot is an aiohttp app. ``asgi_handler`` turns one aiohttp request into one
ASGI ``http`` call: the body is handed over as it arrives, the response (a JSON answer or a
server-sent event stream) is written as the application sends it, and ``http.disconnect`` is
reported once the answer is complete or the client went away (so an SSE stream left by its
client ends instead of waiting for its next event).

Example:
    >>> app.router.add_route("*", "/mcp", asgi_handler(manager.handle_request))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ScopeHook = Callable[[web.Request, Scope], None]
"""Adds to the scope what the aiohttp side knows (the authenticated user, say)."""

DISCONNECT_POLL_SECONDS = 0.5
"""How often a finished request body checks whether its client is still connected."""
_CHUNK = 64 * 1024


def asgi_handler(app: ASGIApp, *, scope_hook: ScopeHook | None = None) -> Handler:
    """An aiohttp handler that serves each request with ``app`` (one ASGI ``http`` call)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        call = _Call(request)
        scope = call.scope()
        if scope_hook is not None:
            scope_hook(request, scope)
        try:
            await app(scope, call.receive, call.send)
        finally:
            call.finished.set()
        return await call.response_or_error()

    return handle


class _Call:
    """One request as an ASGI call: the scope, ``receive`` and ``send``."""

    def __init__(self, request: web.Request) -> None:
        self._request = request
        self._response: web.StreamResponse | None = None
        self._body = request.content.iter_chunked(_CHUNK).__aiter__()
        self._body_done = False
        self.finished = asyncio.Event()
        """Set once the application returned (or the answer was complete)."""

    def scope(self) -> Scope:
        request = self._request
        transport = request.transport
        peer = transport.get_extra_info("peername") if transport is not None else None
        sock = transport.get_extra_info("sockname") if transport is not None else None
        path, _, query = request.raw_path.partition("?")
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": f"{request.version.major}.{request.version.minor}",
            "method": request.method,
            "scheme": request.scheme,
            "path": request.path,
            "raw_path": path.encode("latin-1"),
            "query_string": query.encode("latin-1"),
            "root_path": "",
            "headers": [(name.lower(), value) for name, value in request.raw_headers],
            "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
            "server": tuple(sock[:2]) if isinstance(sock, tuple) else None,
            "state": {},
        }

    async def receive(self) -> Message:
        if not self._body_done:
            try:
                chunk = await self._body.__anext__()
            except StopAsyncIteration:  # the body ended (or there was none): said once
                self._body_done = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.request", "body": chunk, "more_body": True}
        await self._gone()
        return {"type": "http.disconnect"}

    async def _gone(self) -> None:
        """Return once the answer is complete or the client disconnected."""
        while not self.finished.is_set():
            transport = self._request.transport
            if transport is None or transport.is_closing():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.finished.wait(), DISCONNECT_POLL_SECONDS)

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            response = web.StreamResponse(status=int(message["status"]))
            for name, value in message.get("headers", ()):
                response.headers.add(_text(name), _text(value))
            self._response = response
            await response.prepare(self._request)  # headers now: an SSE stream opens at once
            return
        if kind != "http.response.body" or self._response is None:
            return
        response = self._response
        if self.finished.is_set():
            return  # the client went away: nothing more to write
        body = message.get("body", b"")
        try:
            if body:
                await response.write(body)
            if not message.get("more_body", False):
                await response.write_eof()
                self.finished.set()
        except ConnectionError:  # the client went away: the application hears http.disconnect
            self.finished.set()

    async def response_or_error(self) -> web.StreamResponse:
        response = self._response
        if response is None:  # the application answered nothing
            return web.Response(status=500, text="no response")
        if not response.prepared:
            await response.prepare(self._request)
            await response.write_eof()
        return response


def _text(value: bytes | str) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value
