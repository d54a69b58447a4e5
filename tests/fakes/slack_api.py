"""A fake Slack Web API on 127.0.0.1 (ephemeral port) that records every call.

The real ``slack_sdk`` client talks to it: ``AsyncWebClient(base_url=fake.base_url)``.

Example:
    async with FakeSlackAPI() as slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
        await client.chat_postMessage(channel="C1", text="hi")
        assert slack.calls_to("chat.postMessage")[0]["text"] == "hi"
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import WSMsgType, web
from aiohttp.test_utils import TestServer

from tests.fakes.slack_agent_api import ASSISTANT_METHODS, STREAM_METHODS, AgentSurfaces

_JSON_FIELDS = ("blocks", "attachments", "view", "metadata")


@dataclass(frozen=True)
class ApiCall:
    """One recorded Web API call."""

    method: str
    args: dict[str, Any]
    token: str | None

    def __getitem__(self, key: str) -> Any:
        return self.args[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.args.get(key, default)


@dataclass(frozen=True)
class PostedMessage:
    """A message as it looks in the fake workspace after every update."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]]
    updates: int = 0
    metadata: dict[str, Any] | None = None


@dataclass
class _Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeSlackAPI:
    """``POST /api/{method}`` with canned answers for the methods the bot uses."""

    def __init__(
        self,
        *,
        team_id: str = "T1",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        valid_token: str | None = None,
    ) -> None:
        self.team_id, self.bot_user_id, self.bot_id = team_id, bot_user_id, bot_id
        self.valid_token = valid_token
        self.calls: list[ApiCall] = []
        self.messages: dict[str, PostedMessage] = {}
        """Every posted message by ``ts``, as it looks after its updates."""
        self.homes: dict[str, dict[str, Any]] = {}
        """The Home tab each user sees now (the last ``views.publish`` for them)."""
        self.usergroups: dict[str, list[str]] = {}
        """Members of each user group, answered by ``usergroups.users.list``."""
        self.names: dict[str, str] = {}
        """Display names (``users.info``) and group handles (``usergroups.list``); anyone not
        listed is named after their id in lower case (``U2`` → ``u2``)."""
        self._failures: dict[str, list[_Failure]] = {}
        self.down: Literal["5xx", "disconnect"] | None = None
        """Slack unreachable while set: every call answers 503 or has its connection dropped."""
        self._disconnects: dict[str, int] = {}
        self._observers: dict[str, list[Callable[[dict[str, Any]], Awaitable[None]]]] = {}
        self._ts = itertools.count(1)
        self.surfaces = AgentSurfaces()
        """Assistant threads' statuses, titles and prompts; which messages still stream."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/api/{method}", self._handle)  # e.g. usergroups.users.list
        app.router.add_get("/link", self._socket)
        self._sockets: list[web.WebSocketResponse] = []
        self._connected = asyncio.Event()
        self._acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._server = TestServer(app, host="127.0.0.1")

    async def __aenter__(self) -> FakeSlackAPI:
        await self._server.start_server()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._server.close()

    @property
    def base_url(self) -> str:
        """The Web API base URL to give the client (ends with ``/api/``)."""
        return str(self._server.make_url("/api/"))

    def new_ts(self) -> str:
        """A fresh message ``ts``."""
        return f"1700000000.{next(self._ts):06d}"

    def calls_to(self, method: str) -> list[ApiCall]:
        """Recorded calls of one method, in order."""
        return [c for c in self.calls if c.method == method]

    def thread(self, channel: str, thread_ts: str) -> list[PostedMessage]:
        """The bot's messages in one thread, oldest first."""
        return [
            m for m in self.messages.values() if m.channel == channel and m.thread_ts == thread_ts
        ]

    async def push(
        self, payload: dict[str, Any], *, kind: str = "events_api", retry_attempt: int = 0
    ) -> dict[str, Any]:
        """Deliver a Socket Mode envelope to the connected app; returns the app's ack."""
        await self._connected.wait()
        envelope_id = uuid.uuid4().hex
        ack: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[envelope_id] = ack
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        await self._sockets[-1].send_json(envelope)
        return await ack

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.append(socket)
        await socket.send_json({"type": "hello", "num_connections": 1})
        self._connected.set()
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                ack = self._acks.pop(str(data.get("envelope_id")), None)
                if ack is not None and not ack.done():
                    ack.set_result(data)
        self._sockets.remove(socket)
        if not self._sockets:
            self._connected.clear()
        return socket

    def on(self, method: str, observer: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        """Run ``await observer(args)`` when ``method`` is called, before it is answered."""
        self._observers.setdefault(method, []).append(observer)

    def disconnect_next(self, method: str, times: int = 1) -> None:
        """Drop the connection instead of answering the next ``times`` calls of ``method``."""
        self._disconnects[method] = self._disconnects.get(method, 0) + times

    def fail_next(
        self,
        method: str,
        *,
        status: int = 200,
        error: str = "internal_error",
        retry_after: int | None = None,
    ) -> None:
        """Make the next call of ``method`` fail (HTTP ``status``; 429 with ``Retry-After``)."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        failure = _Failure(status, {"ok": False, "error": error}, headers)
        self._failures.setdefault(method, []).append(failure)

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _read_args(request)
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") or args.pop("token", None)
        self.calls.append(ApiCall(method, args, token))
        for observer in self._observers.get(method, []):
            await observer(args)
        if self.down == "disconnect":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if self.down == "5xx":
            return web.json_response({"ok": False, "error": "service_unavailable"}, status=503)
        if self._disconnects.get(method):
            self._disconnects[method] -= 1
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        pending = self._failures.get(method)
        if pending:
            failure = pending.pop(0)
            return web.json_response(failure.body, status=failure.status, headers=failure.headers)
        if self.valid_token is not None and token != self.valid_token:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        return web.json_response(self._answer(method, args))

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://test.slack.com/",
                "team": "Test",
                "user": "countersign",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": self.bot_id,
                "is_enterprise_install": False,
            }
        if method in ASSISTANT_METHODS or method in STREAM_METHODS:
            return self.surfaces.answer(method, args, self)
        if method == "chat.postMessage":
            ts = self.new_ts()
            message = {"type": "message", "text": args.get("text"), "ts": ts, "bot_id": self.bot_id}
            if args.get("thread_ts"):
                message["thread_ts"] = args["thread_ts"]
            self.messages[ts] = PostedMessage(
                channel=str(args.get("channel")),
                ts=ts,
                thread_ts=args.get("thread_ts"),
                text=args.get("text") or "",
                blocks=list(args.get("blocks") or []),
                metadata=args.get("metadata") or None,
            )
            return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}
        if method == "conversations.replies":
            root = str(args.get("ts"))
            with_metadata = str(args.get("include_all_metadata")).lower() in ("1", "true")
            replies = [
                {
                    "type": "message",
                    "ts": m.ts,
                    "thread_ts": m.thread_ts,
                    "text": m.text,
                    **({"metadata": m.metadata} if with_metadata and m.metadata else {}),
                }
                for m in self.messages.values()
                if m.channel == str(args.get("channel")) and root in (m.ts, m.thread_ts)
            ]
            return {"ok": True, "messages": replies, "has_more": False}
        if method == "chat.update":
            old = self.messages.get(str(args.get("ts")))
            if old is None:
                return {"ok": False, "error": "message_not_found"}
            self.messages[old.ts] = PostedMessage(
                channel=old.channel,
                ts=old.ts,
                thread_ts=old.thread_ts,
                text=args.get("text") or old.text,
                blocks=list(args["blocks"]) if "blocks" in args else old.blocks,
                updates=old.updates + 1,
                metadata=old.metadata,
            )
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}
        if method == "apps.connections.open":
            url = str(self._server.make_url("/link")).replace("http://", "ws://", 1)
            return {"ok": True, "url": url}
        if method == "usergroups.users.list":
            group = str(args.get("usergroup"))
            if group not in self.usergroups:
                return {"ok": False, "error": "no_such_subteam"}
            return {"ok": True, "users": self.usergroups[group]}
        if method == "users.info":
            user = str(args.get("user"))
            name = self.names.get(user, user.lower())
            profile = {"display_name": name, "real_name": name.title()}
            person = {"id": user, "team_id": self.team_id, "name": name, "profile": profile}
            return {"ok": True, "user": person}
        if method == "usergroups.list":
            groups = [
                {"id": g, "team_id": self.team_id, "handle": self.names.get(g, g.lower())}
                for g in self.usergroups
            ]
            return {"ok": True, "usergroups": groups}
        if method == "views.publish":
            view = dict(args.get("view") or {})
            self.homes[str(args.get("user_id"))] = view
            return {"ok": True, "view": {"id": "VHOME", **view}}
        if method == "chat.getPermalink":
            channel, ts = str(args.get("channel")), str(args.get("message_ts"))
            if ts not in self.messages:
                return {"ok": False, "error": "message_not_found"}
            link = f"https://test.slack.com/archives/{channel}/p{ts.replace('.', '')}"
            return {"ok": True, "channel": channel, "permalink": link}
        if method == "views.open":
            return {"ok": True, "view": {"id": "V1", **(args.get("view") or {})}}
        return {"ok": True}


async def _read_args(request: web.Request) -> dict[str, Any]:
    if request.method == "GET":
        return dict(request.query)
    if request.content_type == "application/json":
        body = await request.json()
        args = dict(body) if isinstance(body, dict) else {}
    else:
        args = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        args.update(request.query)  # slack_sdk sends ``params=`` of a POST in the query string
    for key in _JSON_FIELDS:
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    return args
