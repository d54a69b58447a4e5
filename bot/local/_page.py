"""The page's routes: the static page, its state (long poll), and what a person does on it.

``GET /`` the page; ``GET /_local/static/{file}``; ``GET /_local/state?user=&since=``;
``POST /_local/messages`` (post or reply), ``/_local/actions`` (click a button),
``/_local/views/{id}/submit`` and ``/_local/views/{id}/close`` (a modal), ``/_local/home`` (open
the Home tab) and ``/_local/home/actions`` (click a button on it), ``/_local/assistant/open``
(open the app's Messages tab); ``GET /archives/{channel}/p<ts>``
(a message link) opens the page on that thread. Every action goes
through ``Delivery``, i.e. through Slack's signed delivery to ``/slack/events``.
"""

from __future__ import annotations

import importlib.resources
import re
from typing import Any

from aiohttp import web

from bot.local._delivery import Delivery
from bot.local._workspace import (
    BOT_NAME,
    BOT_USER_ID,
    CHANNEL_ID,
    CHANNEL_NAME,
    GROUP_HANDLES,
    PEOPLE,
    TEAM_ID,
    Message,
    Workspace,
    dm_of,
)
from bot.slack import APPROVE_ACTION

POLL_SECONDS = 20.0
"""How long a state request waits for a change before answering anyway."""
_STATIC = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "blockkit.js": "text/javascript",
    "assistant.js": "text/javascript",
    "style.css": "text/css",
}
_MENTION = re.compile(r"(?<![<\w])@" + BOT_NAME + r"\b", re.I)


class Page:
    """Routes of the local workspace page."""

    def __init__(self, workspace: Workspace, delivery: Delivery, *, model: str) -> None:
        self.workspace = workspace
        self.delivery = delivery
        self.model = model

    def install(self, app: web.Application) -> None:
        app.router.add_get("/", self.index)
        app.router.add_get("/favicon.ico", self.no_icon)
        app.router.add_get("/_local/static/{name}", self.static)
        app.router.add_get("/archives/{channel}/{message}", self.archive)
        app.router.add_get("/_local/state", self.state)
        app.router.add_post("/_local/messages", self.post_message)
        app.router.add_post("/_local/actions", self.click)
        app.router.add_post("/_local/views/{view_id}/submit", self.submit)
        app.router.add_post("/_local/views/{view_id}/close", self.close_view)
        app.router.add_post("/_local/home", self.open_home)
        app.router.add_post("/_local/assistant/open", self.open_messages_tab)
        app.router.add_post("/_local/home/actions", self.click_home)

    async def index(self, request: web.Request) -> web.Response:
        return _file("index.html")

    async def no_icon(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in _STATIC:
            raise web.HTTPNotFound()
        return _file(name)

    async def archive(self, request: web.Request) -> web.Response:
        """A message link as Slack builds them (``/archives/C…/p<ts>?thread_ts=``, the workspace
        URL being this page's): the page, opened on that thread."""
        thread = request.query.get("thread_ts") or _ts(request.match_info["message"])
        if thread is None or request.match_info["channel"] != CHANNEL_ID:
            raise web.HTTPNotFound(text="no such message")
        raise web.HTTPFound(f"/#thread={thread}")

    async def state(self, request: web.Request) -> web.Response:
        user = self._user(request.query.get("user"))
        try:
            since = int(request.query.get("since", "-1"))
        except ValueError:
            since = -1
        await self.workspace.wait(since, POLL_SECONDS)
        return web.json_response(
            {
                **self.workspace.state(user),
                "model": self.model,
                "team": TEAM_ID,
                "channel": {"id": CHANNEL_ID, "name": CHANNEL_NAME},
                "bot": {"id": BOT_USER_ID, "name": BOT_NAME},
                "people": [{"id": p.id, "name": p.name} for p in PEOPLE],
                "channels": {CHANNEL_ID: CHANNEL_NAME},  # <#C…> shows as #ops, as in Slack
                "groups": GROUP_HANDLES,  # <!subteam^S…> shows as @approvers
                "user": user,
                "approve_action": APPROVE_ACTION,
            }
        )

    async def post_message(self, request: web.Request) -> web.Response:
        body = await _json(request)
        user = self._user(body.get("user"))
        text = str(body.get("text") or "").strip()
        thread_ts = body.get("thread_ts") or None
        channel = str(body.get("channel") or CHANNEL_ID)  # or the person's assistant threads
        if not text:
            raise web.HTTPBadRequest(text="empty message")
        if channel not in (CHANNEL_ID, dm_of(user)):
            raise web.HTTPNotFound(text="no such channel")
        found = None if thread_ts is None else self.workspace.messages.get(thread_ts)
        if thread_ts is not None and (found is None or found.channel != channel):
            raise web.HTTPNotFound(text="no such thread")
        text = slack_text(text, top_level=thread_ts is None and channel == CHANNEL_ID)
        message = self.workspace.add(
            Message(
                ts=self.workspace.next_ts(),
                user=user,
                text=text,
                thread_ts=thread_ts,
                channel=channel,
            )
        )
        if channel != CHANNEL_ID and thread_ts is None:  # the Messages tab: a new conversation
            self.workspace.assistant.open(channel, message.ts, user)
        statuses = await self.delivery.message(message)
        return web.json_response({"ok": True, "ts": message.ts, "delivered": statuses})

    async def open_messages_tab(self, request: web.Request) -> web.Response:
        """The person opens the app's Messages tab (the agent view): Slack sends
        ``app_home_opened`` with ``tab == "messages"``."""
        user = self._user((await _json(request)).get("user"))
        status = await self.delivery.home_opened(user, tab="messages")
        return web.json_response({"ok": status == 200, "status": status})

    async def click(self, request: web.Request) -> web.Response:
        """A button of a message. The page sends the button as it shows it (``block_id``,
        ``action_id``, ``value``): when the message changed since (another tab or person decided
        first), the click is delivered as the page showed it, as Slack delivers a click on a
        message its client has not refreshed yet, so the bot answers who decided first."""
        body = await _json(request)
        user = self._user(body.get("user"))
        message = self.workspace.messages.get(str(body.get("ts")))
        if message is None or message.ephemeral_for not in (None, user):
            raise web.HTTPNotFound(text="no such message")
        found = _button(message.blocks, body) or (_shown(body) if message.edited else None)
        if found is None:
            raise web.HTTPNotFound(text="no such button")
        status = await self.delivery.click(user, message, *found)
        return web.json_response({"ok": status == 200, "status": status})

    async def open_home(self, request: web.Request) -> web.Response:
        """The person opened the Home tab: Slack sends ``app_home_opened``."""
        user = self._user((await _json(request)).get("user"))
        status = await self.delivery.home_opened(user)
        return web.json_response({"ok": status == 200, "status": status})

    async def click_home(self, request: web.Request) -> web.Response:
        """A button of the person's Home tab (``block_id`` + ``action_id``: a Home view repeats
        the card's action ids, one block per approval); on a Home tab published again since,
        delivered as the page showed it (see ``click``)."""
        body = await _json(request)
        user = self._user(body.get("user"))
        home = self.workspace.homes.get(user)
        if home is None:
            raise web.HTTPNotFound(text="no Home tab")
        found = _button(home.view.get("blocks") or [], body) or _shown(body)
        if found is None:
            raise web.HTTPNotFound(text="no such button")
        status = await self.delivery.click_view(user, home, *found)
        return web.json_response({"ok": status == 200, "status": status})

    async def submit(self, request: web.Request) -> web.Response:
        body = await _json(request)
        user = self._user(body.get("user"))
        view = self.workspace.views.get(request.match_info["view_id"])
        if view is None or view.user != user:
            raise web.HTTPNotFound(text="no such view")
        raw = body.get("values")
        values: dict[str, Any] = raw if isinstance(raw, dict) else {}
        status, answer = await self.delivery.submit(user, view, values)
        action = answer.get("response_action")
        if status == 200 and action == "errors":
            return web.json_response({"ok": False, "errors": answer.get("errors") or {}})
        if status == 200 and action == "update" and isinstance(answer.get("view"), dict):
            view.view = dict(answer["view"])
            self.workspace.changed()
        elif status == 200:
            self.workspace.close_views(user, None if action == "clear" else view.id)
        return web.json_response({"ok": status == 200, "status": status})

    async def close_view(self, request: web.Request) -> web.Response:
        body = await _json(request)
        user = self._user(body.get("user"))
        view = self.workspace.views.get(request.match_info["view_id"])
        if view is None or view.user != user:
            raise web.HTTPNotFound(text="no such view")
        self.workspace.close_views(user, view.id)
        if view.view.get("notify_on_close"):
            await self.delivery.closed(user, view)
        return web.json_response({"ok": True})

    def _user(self, raw: Any) -> str:
        person = self.workspace.person(str(raw or ""))
        return person.id if person else PEOPLE[0].id


def slack_text(text: str, *, top_level: bool) -> str:
    """What Slack stores for typed text: ``& < >`` escaped, ``@countersign`` as a mention.

    A top-level message always mentions the bot (the channel is the bot's: a person talks to
    it there), so it arrives as ``app_mention`` as well as ``message``.
    """
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _MENTION.sub(f"<@{BOT_USER_ID}>", escaped)
    if top_level and f"<@{BOT_USER_ID}>" not in escaped:
        escaped = f"<@{BOT_USER_ID}> {escaped}"
    return escaped


def _button(
    blocks: list[dict[str, Any]], body: dict[str, Any]
) -> tuple[dict[str, Any], str | None] | None:
    """The button ``body`` names (its ``action_id``, and its ``block_id`` and ``value`` when
    given: a batch card has one menu per call), or the option of an overflow menu (``value``:
    the option's), and its block's id; None when it is gone."""
    for block in blocks:
        if body.get("block_id") is not None and block.get("block_id") != body["block_id"]:
            continue
        for element in [*(block.get("elements") or []), block.get("accessory")]:  # Slack: both
            if not isinstance(element, dict) or element.get("action_id") != body.get("action_id"):
                continue
            if element.get("type") == "overflow":
                option = next(
                    (
                        o
                        for o in element.get("options") or []
                        if o.get("value") == body.get("value")
                    ),
                    None,
                )
                if option is None:
                    continue
                chosen = {"type": "overflow", "action_id": element["action_id"]}
                return {**chosen, "selected_option": option}, block.get("block_id")
            if body.get("value") is None or element.get("value") == body["value"]:
                return element, block.get("block_id")
    return None


def _shown(body: dict[str, Any]) -> tuple[dict[str, Any], str | None] | None:
    """The button as the page showed it, when it sent one (``action_id`` and ``value``)."""
    action, value, block = body.get("action_id"), body.get("value"), body.get("block_id")
    if not isinstance(action, str) or not isinstance(value, str):
        return None
    return {"type": "button", "action_id": action, "value": value}, (
        block if isinstance(block, str) else None
    )


def _ts(message: str) -> str | None:
    """``p1700000000000100`` (a link's last part) as the ts ``1700000000.000100``."""
    digits = message.removeprefix("p")
    if not digits.isdigit() or len(digits) <= 6:
        return None
    return f"{digits[:-6]}.{digits[-6:]}"


def _file(name: str) -> web.Response:
    data = importlib.resources.files("bot.local").joinpath("static", name).read_bytes()
    return web.Response(
        body=data, content_type=_STATIC[name], headers={"Cache-Control": "no-cache"}
    )


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text="expected a JSON body") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="expected a JSON object")
    return body
