"""A minimal fake Slack Web API for ``python -m bench clicks`` (127.0.0.1, any free port).

The bot's real ``slack_sdk`` client talks to it (``SLACK_API_URL=fake.base_url``). It answers the
methods the bot calls during a mention → card → click → answer cycle and keeps each message as it
reads after its updates. A copy of the essentials of ``tests/fakes/slack_api.py``: bench never
imports ``tests``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

_JSON_FIELDS = ("blocks", "attachments", "view", "metadata")


@dataclass
class Message:
    """A message the bot posted, as it reads now."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]]
    was_card: bool
    """Posted with buttons (an approval card)."""
    updates: int = 0


@dataclass
class FakeSlack:
    """``POST /api/{method}``; ``async with FakeSlack() as slack: slack.base_url``."""

    team_id: str = "T1"
    bot_user_id: str = "UBOT"
    messages: dict[str, Message] = field(default_factory=dict)
    """Every posted message by ``ts``."""
    ephemerals: list[dict[str, Any]] = field(default_factory=list)
    """Every ``chat.postEphemeral`` call's arguments."""
    calls: list[str] = field(default_factory=list)
    """The method of every call, in order."""
    homes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The Home view each user sees now (``views.publish``)."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set on every recorded call (``wait_until`` clears and waits on it)."""
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None
    _port: int = 0

    async def __aenter__(self) -> FakeSlack:
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/api/{method}", self._handle)  # slack_sdk GETs chat.getPermalink
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """The Web API base URL (ends with ``/api/``)."""
        return f"http://127.0.0.1:{self._port}/api/"

    def cards(self) -> list[Message]:
        """Messages that were posted as approval cards, oldest first."""
        return [m for m in self.messages.values() if m.was_card]

    def answers(self, thread_ts: str) -> list[Message]:
        """The bot's plain messages in one thread (no cards)."""
        return [m for m in self.messages.values() if m.thread_ts == thread_ts and not m.was_card]

    async def wait_until(self, done: Callable[[], bool]) -> None:
        """Wait until ``done()`` is true (re-checked after every recorded call)."""
        while not done():
            self.changed.clear()
            await self.changed.wait()

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.method == "GET":
            args: dict[str, Any] = dict(request.query)
        elif request.content_type == "application/json":
            body = await request.json()
            args = dict(body) if isinstance(body, dict) else {}
        else:
            args = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        for key in _JSON_FIELDS:
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        self.calls.append(method)
        answer = self._answer(method, args)
        self.changed.set()
        return web.json_response(answer)

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://bench.slack.com/",
                "team": "Bench",
                "user": "countersign",
                "team_id": self.team_id,
                "user_id": self.bot_user_id,
                "bot_id": "BBOT",
            }
        if method == "chat.postMessage":
            ts = f"1700000000.{next(self._ts):06d}"
            blocks = list(args.get("blocks") or [])
            self.messages[ts] = Message(
                channel=str(args.get("channel")),
                ts=ts,
                thread_ts=args.get("thread_ts"),
                text=args.get("text") or "",
                blocks=blocks,
                was_card=any(b.get("type") == "actions" for b in blocks),
            )
            return {"ok": True, "channel": args.get("channel"), "ts": ts}
        if method == "chat.update":
            message = self.messages.get(str(args.get("ts")))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            message.text = args.get("text") or message.text
            message.blocks = list(args["blocks"]) if "blocks" in args else message.blocks
            message.updates += 1
            return {"ok": True, "channel": message.channel, "ts": message.ts}
        if method == "views.publish" and isinstance(args.get("view"), dict):
            self.homes[str(args.get("user_id"))] = args["view"]
            return {"ok": True, "view": {**args["view"], "id": "VHOME", "hash": "h"}}
        if method == "chat.getPermalink":
            link = f"https://bench.slack.com/archives/{args.get('channel')}/p1"
            return {"ok": True, "channel": args.get("channel"), "permalink": link}
        if method == "chat.postEphemeral":
            self.ephemerals.append(args)
            return {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}
        return {"ok": True}
