"""``Workspace``: the state of the local Slack workspace (one channel, three people, the bot).

Messages (with their Block Kit JSON exactly as the bot posted it), ephemeral notes, open
modals (each person's own), and each person's App Home tab as the bot last published it. Every
change bumps ``version`` and wakes the page's long polls. A modal that decides a call (its
``private_metadata`` names it) is dropped once no card offers that call's buttons any more:
the call was decided, by someone else or elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bot.local._assistant_state import AssistantThreads

TEAM_ID = "T0LOCAL"
CHANNEL_ID = "C0OPS"
CHANNEL_NAME = "ops"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
BOT_NAME = "countersign"
APPROVERS_GROUP = "S0APPROVERS"
"""A user group holding Sam, for ``APPROVERS=S0APPROVERS``."""


@dataclass(frozen=True)
class Person:
    """A member of the local workspace."""

    id: str
    name: str


PEOPLE = (Person("U0ALEX", "alex"), Person("U0SAM", "sam"), Person("U0ROBIN", "robin"))
"""The people the page can act as (the first is the default): three, so that a two-person rule
(the demo's refunds over 1,000) completes without anyone approving their own request."""
GROUPS = {APPROVERS_GROUP: ["U0SAM"]}
GROUP_HANDLES = {APPROVERS_GROUP: "approvers"}
"""Each user group's handle: ``<!subteam^S0APPROVERS>`` shows as ``@approvers``, as in Slack."""


def dm_of(user: str) -> str:
    """The id of ``user``'s direct messages with the app (where its assistant threads are)."""
    return "D0" + user.removeprefix("U")


def known_channel(channel: object) -> bool:
    """The channel, or a person's direct messages with the app."""
    return channel == CHANNEL_ID or any(channel == dm_of(p.id) for p in PEOPLE)


DECIDING_ACTIONS = frozenset(
    {"approval:approve", "approval:decline", "approval:edit", "suspension:provide", "approval:row"}
)
"""The action ids of a card's buttons (and a batch row's menu) that decide its call
(``bot.slack``'s ids)."""


@dataclass
class Message:
    """A message in the channel (``thread_ts`` set on replies)."""

    ts: str
    user: str
    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    bot_id: str | None = None
    edited: int = 0
    ephemeral_for: str | None = None
    """Set on ephemeral notes: the only person who sees it."""
    metadata: dict[str, Any] | None = None
    """Message metadata the poster attached (``conversations.replies`` returns it)."""
    channel: str = CHANNEL_ID
    """The channel, or a person's direct messages with the app (the assistant view)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "ts": self.ts,
            "user": self.user,
            "text": self.text,
            "blocks": self.blocks,
            "thread_ts": self.thread_ts,
            "bot_id": self.bot_id,
            "edited": self.edited,
            "ephemeral": self.ephemeral_for is not None,
        }


@dataclass
class View:
    """An open modal."""

    id: str
    user: str
    view: dict[str, Any]
    hash: str = field(default_factory=lambda: secrets.token_hex(8))

    def to_json(self) -> dict[str, Any]:
        return {**self.view, "id": self.id, "hash": self.hash, "team_id": TEAM_ID}


class Workspace:
    """Channel ``#ops`` of team ``T0LOCAL`` and the modals open in it."""

    def __init__(self) -> None:
        self.messages: dict[str, Message] = {}
        self.views: dict[str, View] = {}
        self.homes: dict[str, View] = {}
        """Each person's Home tab (``views.publish``), by user id."""
        self.triggers: dict[str, tuple[str, float]] = {}
        self.response_urls: dict[str, tuple[str, Message]] = {}
        self.version = 0
        self._changed = asyncio.Event()
        self._last_ts = 0.0
        self._ids = itertools.count(1)
        self.closing = False
        self.assistant = AssistantThreads()
        """The assistant threads' titles, prompts, status lines and open streams."""

    def person(self, user_id: str) -> Person | None:
        return next((p for p in PEOPLE if p.id == user_id), None)

    def next_ts(self) -> str:
        """A fresh, increasing Slack ``ts``."""
        now = max(time.time(), self._last_ts + 0.000001)
        self._last_ts = now
        return f"{now:.6f}"

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}{secrets.token_hex(3).upper()}"

    def new_trigger(self, user: str) -> str:
        trigger = f"{next(self._ids)}.{secrets.token_hex(8)}"
        self.triggers[trigger] = (user, time.monotonic())
        return trigger

    def new_response_url(self, user: str, message: Message) -> str:
        """The token of a ``response_url`` for ``user``'s click on ``message``."""
        token = secrets.token_urlsafe(16)
        self.response_urls[token] = (user, message)
        return token

    def add(self, message: Message) -> Message:
        self.messages[message.ts] = message
        self.changed()
        return message

    def open_view(self, user: str, view: dict[str, Any]) -> View:
        opened = View(id=self.new_id("V"), user=user, view=dict(view))
        self.views[opened.id] = opened
        self.changed()
        return opened

    def publish_home(self, user: str, view: dict[str, Any]) -> View:
        """``view`` becomes ``user``'s Home tab (a new hash each time, as Slack does)."""
        old = self.homes.get(user)
        home = View(id=old.id if old else self.new_id("V"), user=user, view=dict(view))
        self.homes[user] = home
        self.changed()
        return home

    def close_views(self, user: str, view_id: str | None = None) -> None:
        for key in [k for k, v in self.views.items() if v.user == user]:
            if view_id is None or key == view_id:
                del self.views[key]
        self.changed()

    def drop_decided_views(self) -> None:
        """Close every modal about a call that no card offers to decide any more."""
        live = {
            ref
            for message in self.messages.values()
            for block in message.blocks
            for value in _deciding_values(block)
            for ref in [_call_of(value)]
            if ref is not None
        }
        decided = [
            key
            for key, view in self.views.items()
            if (ref := _call_of(_modal_call(view.view.get("private_metadata")))) is not None
            and ref not in live
        ]
        for key in decided:
            del self.views[key]
        if decided:
            self.changed()

    def changed(self) -> None:
        """Bump the version and wake every waiting poll."""
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, since: int, seconds: float) -> None:
        """Return when ``version`` passes ``since``, the workspace closes, or after ``seconds``."""
        if self.version > since or self.closing:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._changed.wait()

    def close(self) -> None:
        """Release every waiting poll (shutdown)."""
        self.closing = True
        self.changed()

    def state(self, user: str) -> dict[str, Any]:
        """What ``user`` sees: messages, their own ephemeral notes and open modals."""
        ordered = sorted(self.messages.values(), key=lambda m: float(m.ts))
        visible = [
            m.to_json()
            for m in ordered
            if m.ephemeral_for in (None, user) and m.channel == CHANNEL_ID
        ]
        dm = dm_of(user)
        assistant = self.assistant.state(dm, [m.to_json() for m in ordered if m.channel == dm])
        views = [v.to_json() for v in self.views.values() if v.user == user]
        home = self.homes.get(user)
        return {
            "version": self.version,
            "messages": visible,
            "views": views,
            "home": home.to_json() if home else None,
            "assistant": assistant,
        }


def _deciding_values(block: dict[str, Any]) -> list[Any]:
    """The values of a block's controls that decide a call: buttons, and the options of a
    batch row's menu (each names its call)."""
    controls = [*(block.get("elements") or []), block.get("accessory")]
    values = []
    for control in controls:
        if not isinstance(control, dict) or control.get("action_id") not in DECIDING_ACTIONS:
            continue
        values.append(control.get("value"))
        values.extend(o.get("value") for o in control.get("options") or [] if isinstance(o, dict))
    return values


def _modal_call(metadata: Any) -> Any:
    """The call a modal decides: the ``a`` of the bot's ``private_metadata`` (``ModalRef``)."""
    try:
        meta = json.loads(metadata) if isinstance(metadata, str) and metadata else None
    except ValueError:
        return None
    return meta.get("a") if isinstance(meta, dict) else None


def _call_of(value: Any) -> tuple[str, str] | None:
    """``(run id, tool call id)`` of a button value (``ApprovalRef``: JSON with ``r`` and ``c``)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, dict) and isinstance(value.get("r"), str) and value.get("c"):
        return value["r"], str(value["c"])
    return None


WORKSPACE = web.AppKey("countersign.local_workspace", Workspace)
"""Where the local workspace's state lives in the web app (local mode only)."""
