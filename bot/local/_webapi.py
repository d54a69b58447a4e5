"""The emulated Slack Web API: ``POST /_slack/api/{method}``, answered from the ``Workspace``.

The bot's real ``AsyncWebClient`` talks to it (``SLACK_API_URL``). It checks the bot token and
answers the methods the bot calls with Slack's shapes and error codes; anything else gets
``unknown_method``, as Slack answers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.local._assistant_api import assistant_methods
from bot.local._workspace import (
    BOT_ID,
    BOT_NAME,
    BOT_USER_ID,
    CHANNEL_ID,
    CHANNEL_NAME,
    GROUP_HANDLES,
    GROUPS,
    PEOPLE,
    TEAM_ID,
    Message,
    Workspace,
    known_channel,
)

API_PATH = "/_slack/api/"
"""Where the emulated Web API is served (the ``SLACK_API_URL`` of local mode)."""
RESPOND_PATH = "/_slack/respond/"
"""Where the ``response_url`` of a click points (``respond()`` in bolt)."""
TRIGGER_TTL_SECONDS = 60.0
"""How long a ``trigger_id`` opens a modal (Slack: about 3 s; longer here for slow machines)."""

_JSON_FIELDS = ("blocks", "attachments", "view")
Args = dict[str, Any]


class WebAPI:
    """Answers Web API calls made with ``token``."""

    def __init__(self, workspace: Workspace, token: str, *, page_url: str) -> None:
        self.workspace = workspace
        self._token = token
        self._page_url = page_url
        self._methods: dict[str, Callable[[Args], Args]] = {
            "auth.test": self.auth_test,
            "chat.postMessage": self.post_message,
            "chat.update": self.update,
            "chat.postEphemeral": self.post_ephemeral,
            "views.open": self.views_open,
            "views.push": self.views_open,
            "views.update": self.views_update,
            "views.publish": self.views_publish,
            "chat.getPermalink": self.permalink,
            "usergroups.users.list": self.usergroup_users,
            "usergroups.list": self.usergroups,
            "users.info": self.users_info,
            "conversations.info": self.conversation_info,
            "conversations.members": self.members,
            "conversations.replies": self.replies,
            **assistant_methods(workspace),
        }

    def install(self, app: web.Application) -> None:
        app.router.add_route("*", API_PATH + "{method}", self.handle)
        app.router.add_post(RESPOND_PATH + "{token}", self.respond)

    async def respond(self, request: web.Request) -> web.Response:
        """A ``response_url`` POST: an ephemeral note, or replace / delete the clicked message."""
        found = self.workspace.response_urls.get(request.match_info["token"])
        if found is None:
            return web.json_response(_error("expired_url"), status=404)
        user, clicked = found
        body = await _read_args(request)
        if body.get("delete_original"):
            self.workspace.messages.pop(clicked.ts, None)
            self.workspace.changed()
            self.workspace.drop_decided_views()
        elif body.get("replace_original") and (clicked.ephemeral_for or clicked.bot_id):
            clicked.text = str(body.get("text") or clicked.text)
            clicked.blocks = list(body.get("blocks") or [])
            clicked.edited += 1
            self.workspace.changed()
            self.workspace.drop_decided_views()
        else:
            ephemeral = body.get("response_type") != "in_channel"
            self.workspace.add(
                Message(
                    ts=self.workspace.next_ts(),
                    user=BOT_USER_ID,
                    text=str(body.get("text") or ""),
                    blocks=list(body.get("blocks") or []),
                    thread_ts=body.get("thread_ts") or clicked.thread_ts,
                    bot_id=BOT_ID,
                    ephemeral_for=user if ephemeral else None,
                )
            )
        return web.json_response({"ok": True})

    async def handle(self, request: web.Request) -> web.Response:
        args = await _read_args(request)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        token = token or str(args.pop("token", ""))
        if not token:
            return web.json_response({"ok": False, "error": "not_authed"})
        if token != self._token:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        method = self._methods.get(request.match_info["method"])
        if method is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response(method(args))

    def auth_test(self, args: Args) -> Args:
        return {
            "ok": True,
            "url": self._page_url + "/",
            "team": "Local workspace",
            "user": BOT_NAME,
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def post_message(self, args: Args) -> Args:
        channel = args.get("channel")
        if not known_channel(channel):
            return _error("channel_not_found")
        if not args.get("text") and not args.get("blocks"):
            return _error("no_text")
        thread_ts = args.get("thread_ts") or None
        if thread_ts is not None and thread_ts not in self.workspace.messages:
            return _error("thread_not_found")
        message = self.workspace.add(
            Message(
                ts=self.workspace.next_ts(),
                user=BOT_USER_ID,
                text=str(args.get("text") or ""),
                blocks=list(args.get("blocks") or []),
                thread_ts=thread_ts,
                bot_id=BOT_ID,
                metadata=_metadata(args.get("metadata")),
                channel=str(channel),
            )
        )
        return {"ok": True, "channel": channel, "ts": message.ts, "message": message.to_json()}

    def replies(self, args: Args) -> Args:
        """A thread's messages, oldest first (with their metadata when asked for)."""
        root = str(args.get("ts") or "")
        if root not in self.workspace.messages:
            return _error("thread_not_found")
        with_metadata = str(args.get("include_all_metadata")).lower() in ("1", "true")
        found = [
            {**m.to_json(), **({"metadata": m.metadata} if with_metadata and m.metadata else {})}
            for m in sorted(self.workspace.messages.values(), key=lambda m: float(m.ts))
            if (m.ts == root or m.thread_ts == root) and m.ephemeral_for is None
        ]
        return {"ok": True, "messages": found, "has_more": False}

    def update(self, args: Args) -> Args:
        message = self.workspace.messages.get(str(args.get("ts")))
        if message is None or args.get("channel") != message.channel:
            return _error("message_not_found")
        if message.bot_id != BOT_ID or message.ephemeral_for is not None:
            return _error("cant_update_message")
        if "text" in args:
            message.text = str(args["text"] or "")
        if "blocks" in args:
            message.blocks = list(args["blocks"] or [])
        message.edited += 1
        self.workspace.changed()
        self.workspace.drop_decided_views()
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    def post_ephemeral(self, args: Args) -> Args:
        channel = args.get("channel")
        if not known_channel(channel):
            return _error("channel_not_found")
        user = str(args.get("user") or "")
        if self.workspace.person(user) is None:
            return _error("user_not_in_channel")
        message = self.workspace.add(
            Message(
                ts=self.workspace.next_ts(),
                user=BOT_USER_ID,
                text=str(args.get("text") or ""),
                blocks=list(args.get("blocks") or []),
                thread_ts=args.get("thread_ts") or None,
                bot_id=BOT_ID,
                ephemeral_for=user,
                channel=str(channel),
            )
        )
        return {"ok": True, "message_ts": message.ts}

    def views_open(self, args: Args) -> Args:
        trigger = self.workspace.triggers.pop(str(args.get("trigger_id")), None)
        if trigger is None:
            return _error("invalid_trigger_id")
        user, issued = trigger
        if time.monotonic() - issued > TRIGGER_TTL_SECONDS:
            return _error("expired_trigger_id")
        view = args.get("view")
        if not isinstance(view, dict) or view.get("type") != "modal":
            return _error("invalid_arguments")
        return {"ok": True, "view": self.workspace.open_view(user, view).to_json()}

    def views_update(self, args: Args) -> Args:
        view_id = args.get("view_id")
        external = args.get("external_id")
        found = next(
            (
                v
                for v in self.workspace.views.values()
                if v.id == view_id or (external and v.view.get("external_id") == external)
            ),
            None,
        )
        if found is None:
            return _error("not_found")
        if args.get("hash") and args["hash"] != found.hash:
            return _error("hash_conflict")
        view = args.get("view")
        if not isinstance(view, dict):
            return _error("invalid_arguments")
        found.view = dict(view)
        self.workspace.changed()
        return {"ok": True, "view": found.to_json()}

    def views_publish(self, args: Args) -> Args:
        """Set a person's Home tab (``user_id``; a ``home`` view; ``hash`` checked if given)."""
        user = str(args.get("user_id") or "")
        if self.workspace.person(user) is None:
            return _error("user_not_found")
        view = args.get("view")
        if not isinstance(view, dict) or view.get("type") != "home":
            return _error("invalid_arguments")
        old = self.workspace.homes.get(user)
        if args.get("hash") and (old is None or args["hash"] != old.hash):
            return _error("hash_conflict")
        return {"ok": True, "view": self.workspace.publish_home(user, view).to_json()}

    def permalink(self, args: Args) -> Args:
        """A link to a message: the page, opened on the message's thread."""
        message = self.workspace.messages.get(str(args.get("message_ts")))
        if args.get("channel") != CHANNEL_ID:
            return _error("channel_not_found")
        if message is None or message.ephemeral_for is not None:
            return _error("message_not_found")
        thread = message.thread_ts or message.ts
        link = f"{self._page_url}/#thread={thread}"
        return {"ok": True, "channel": CHANNEL_ID, "permalink": link}

    def usergroup_users(self, args: Args) -> Args:
        users = GROUPS.get(str(args.get("usergroup")))
        return _error("no_such_subteam") if users is None else {"ok": True, "users": users}

    def usergroups(self, args: Args) -> Args:
        """Every user group with its handle."""
        groups = [
            {"id": g, "team_id": TEAM_ID, "handle": GROUP_HANDLES.get(g, g.lower()), "name": g}
            for g in GROUPS
        ]
        return {"ok": True, "usergroups": groups}

    def users_info(self, args: Args) -> Args:
        person = self.workspace.person(str(args.get("user")))
        if person is None:
            return _error("user_not_found")
        return {
            "ok": True,
            "user": {
                "id": person.id,
                "team_id": TEAM_ID,
                "name": person.name,
                "is_bot": False,
                "profile": {"display_name": person.name, "real_name": person.name.title()},
            },
        }

    def conversation_info(self, args: Args) -> Args:
        if args.get("channel") != CHANNEL_ID:
            return _error("channel_not_found")
        return {"ok": True, "channel": {"id": CHANNEL_ID, "name": CHANNEL_NAME, "is_member": True}}

    def members(self, args: Args) -> Args:
        if args.get("channel") != CHANNEL_ID:
            return _error("channel_not_found")
        return {"ok": True, "members": [p.id for p in PEOPLE] + [BOT_USER_ID]}


def _error(code: str) -> Args:
    return {"ok": False, "error": code}


async def _read_args(request: web.Request) -> Args:
    if request.method == "GET":
        args: Args = dict(request.query)
    elif request.content_type == "application/json":
        body = await request.json()
        args = dict(body) if isinstance(body, dict) else {}
    else:
        args = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        args.update(request.query)
    for key in _JSON_FIELDS:
        if isinstance(args.get(key), str):
            try:
                args[key] = json.loads(args[key])
            except ValueError:
                args[key] = None
    return args


def _metadata(value: Any) -> dict[str, Any] | None:
    """``metadata`` as sent: a JSON object, or its text (a form post)."""
    if isinstance(value, str) and value:
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None
