"""``python -m bot gateway --stdio``: a thin relay from a client that starts a command to a
running bot's ``/mcp`` (SPEC 17).

Some MCP clients only start servers as commands. This process speaks MCP on its stdin and
stdout (the official SDK's ``stdio_server``) and passes every message, both ways and unchanged,
to the bot's Streamable HTTP endpoint (the SDK's ``streamable_http_client``) at
``COUNTERSIGN_URL`` with ``COUNTERSIGN_TOKEN``: the card, the decision and the upstream call
all happen in the bot, so this process holds nothing worth keeping. The token is tried first,
so a wrong one ends the relay at once with a sentence on stderr instead of a client waiting.

Example:
    >>> await relay_stdio("http://127.0.0.1:3000", token)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

from bot._errors import BotConfigError

logger = logging.getLogger(__name__)

TOKEN_MISSING = (
    "Set COUNTERSIGN_TOKEN to your own token (one of the bot's API_TOKENS): the relay sends it "
    "to the bot, which asks for approval in your name"
)
REFUSED = "{url}/mcp refused COUNTERSIGN_TOKEN ({status}): {message}"
UNREACHABLE = "{url}/mcp cannot be reached ({error}): check COUNTERSIGN_URL and that the bot runs"


async def relay_stdio(url: str, token: str | None) -> None:
    """Relay MCP between this process's stdin/stdout and ``url``'s ``/mcp`` until either side
    ends. Raises ``BotConfigError`` when the bot cannot be reached or refuses the token."""
    if token is None:
        raise BotConfigError([TOKEN_MISSING])
    endpoint = f"{url}/mcp"
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=None)  # a held call may take long: the bot says when
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, trust_env=False) as http:
        await _check_token(http, url, endpoint)
        async with (
            streamable_http_client(endpoint, http_client=http) as (remote_read, remote_write),
            stdio_server() as (local_read, local_write),
            anyio.create_task_group() as tasks,
        ):

            async def pump(source: Any, sink: Any) -> None:
                async for message in source:
                    if isinstance(message, Exception):  # the transport's own trouble
                        print(f"countersign relay: {message}", file=sys.stderr)
                        continue
                    await sink.send(message)
                tasks.cancel_scope.cancel()  # one side ended: so does the relay

            tasks.start_soon(pump, local_read, remote_write)
            tasks.start_soon(pump, remote_read, local_write)


async def _check_token(http: httpx2.AsyncClient, url: str, endpoint: str) -> None:
    """401/403 before any message: the relay would only relay refusals. (A session id no
    session has: past the token check, the bot answers 404 at once.)"""
    probe = {"Accept": "text/event-stream", "Mcp-Session-Id": "countersign-relay-token-check"}
    try:
        response = await http.get(endpoint, headers=probe)
    except httpx2.HTTPError as exc:
        raise BotConfigError([UNREACHABLE.format(url=url, error=exc)]) from None
    if response.status_code in (401, 403):
        try:
            message = response.json().get("message", response.text)
        except ValueError:
            message = response.text
        raise BotConfigError(
            [REFUSED.format(url=url, status=response.status_code, message=message)]
        )
