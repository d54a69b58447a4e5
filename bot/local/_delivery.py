"""Slack's side of event and interaction delivery, emulated: what a person does on the page
becomes the exact payload Slack would send, signed with the workspace's signing secret, and
POSTed to the bot's own ``/slack/events`` (the same bolt app and signature check as in
production).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

import aiohttp
from slack_sdk.signature import SignatureVerifier

from bot.local._workspace import (
    BOT_USER_ID,
    CHANNEL_ID,
    CHANNEL_NAME,
    TEAM_ID,
    Message,
    View,
    Workspace,
    dm_of,
)

APP_ID = "A0LOCAL"


class Delivery:
    """Builds, signs and delivers events and interactions to ``events_url``."""

    def __init__(
        self, workspace: Workspace, *, secret: str, events_url: str, respond_url: str
    ) -> None:
        self.workspace = workspace
        self.events_url = events_url
        self.respond_url = respond_url
        self._verifier = SignatureVerifier(secret)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def signed(self, body: str, content_type: str) -> dict[str, str]:
        """The headers Slack sends with ``body``."""
        ts = str(int(time.time()))
        return {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": self._verifier.generate_signature(timestamp=ts, body=body) or "",
        }

    async def post(self, body: str, content_type: str) -> tuple[int, str]:
        """POST a signed body to ``/slack/events``; the bot's status and response body."""
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        headers = self.signed(body, content_type)
        async with self._session.post(self.events_url, data=body, headers=headers) as response:
            return response.status, await response.text()

    async def message(self, message: Message) -> list[int]:
        """Deliver a person's message: ``message`` and, when it mentions the bot, ``app_mention``
        (two deliveries with their own ``event_id``, as Slack sends them)."""
        direct = message.channel != CHANNEL_ID
        event = {
            "type": "message",
            "user": message.user,
            "text": message.text,
            "ts": message.ts,
            "channel": message.channel,
            "channel_type": "im" if direct else "channel",
            "team": TEAM_ID,
            "event_ts": message.ts,
        }
        if message.thread_ts is not None:
            event["thread_ts"] = message.thread_ts
        events = [event]
        if f"<@{BOT_USER_ID}>" in message.text and not direct:
            mention = {k: v for k, v in event.items() if k != "channel_type"}
            events.append({**mention, "type": "app_mention"})
        statuses = []
        for item in events:
            status, _ = await self.post(json.dumps(self._envelope(item)), "application/json")
            statuses.append(status)
        return statuses

    async def home_opened(self, user: str, *, tab: str = "home") -> int:
        """Deliver ``app_home_opened``: ``user`` opened the app's Home tab (``tab="home"``) or
        its Messages tab (``"messages"``: the agent view's conversations)."""
        home = self.workspace.homes.get(user)
        event: dict[str, Any] = {
            "type": "app_home_opened",
            "user": user,
            "channel": dm_of(user),
            "tab": tab,
            "event_ts": f"{time.time():.6f}",
        }
        if home is not None and tab == "home":
            event["view"] = home.to_json()
        status, _ = await self.post(json.dumps(self._envelope(event)), "application/json")
        return status

    def _envelope(self, event: dict[str, Any]) -> dict[str, Any]:
        return {
            "token": "local",
            "team_id": TEAM_ID,
            "api_app_id": APP_ID,
            "type": "event_callback",
            "event_id": self.workspace.new_id("Ev"),
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
            "is_ext_shared_channel": False,
            "event": event,
        }

    async def click(
        self, user: str, message: Message, action: dict[str, Any], block_id: str | None
    ) -> int:
        """Deliver a ``block_actions`` interaction: ``user`` clicked ``action`` of ``message``."""
        payload = {
            **self._block_actions(user, action, block_id),
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": message.ephemeral_for is not None,
                **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
            },
            "channel": {
                "id": message.channel,
                "name": CHANNEL_NAME if message.channel == CHANNEL_ID else "directmessage",
            },
            "message": message.to_json() | {"type": "message"},
            "state": {"values": {}},
            "response_url": self.respond_url + self.workspace.new_response_url(user, message),
        }
        status, _ = await self.post(_form(payload), "application/x-www-form-urlencoded")
        return status

    async def click_view(
        self, user: str, view: View, action: dict[str, Any], block_id: str | None
    ) -> int:
        """Deliver a ``block_actions`` interaction from a view (the Home tab or a modal): no
        channel, no message, no ``response_url``, the view instead (as Slack sends it)."""
        payload = {
            **self._block_actions(user, action, block_id),
            "container": {"type": "view", "view_id": view.id},
            "view": {**view.to_json(), "state": {"values": {}}, "app_id": APP_ID},
        }
        status, _ = await self.post(_form(payload), "application/x-www-form-urlencoded")
        return status

    def _block_actions(
        self, user: str, action: dict[str, Any], block_id: str | None
    ) -> dict[str, Any]:
        return {
            "type": "block_actions",
            "user": self._user(user),
            "api_app_id": APP_ID,
            "token": "local",
            "team": {"id": TEAM_ID, "domain": "local"},
            "trigger_id": self.workspace.new_trigger(user),
            "actions": [_action(action, block_id)],
            "is_enterprise_install": False,
        }

    async def submit(
        self, user: str, view: View, values: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Deliver a ``view_submission``; the bot's status and its JSON answer (may be empty)."""
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM_ID, "domain": "local"},
            "user": self._user(user),
            "api_app_id": APP_ID,
            "token": "local",
            "trigger_id": self.workspace.new_trigger(user),
            "view": {
                **view.to_json(),
                "state": {"values": values},
                "root_view_id": view.id,
                "previous_view_id": None,
                "app_id": APP_ID,
                "bot_id": "B0BOT",
            },
            "response_urls": [],
            "is_enterprise_install": False,
        }
        status, body = await self.post(_form(payload), "application/x-www-form-urlencoded")
        try:
            answer = json.loads(body) if body.strip() else {}
        except ValueError:
            answer = {}
        return status, answer if isinstance(answer, dict) else {}

    async def closed(self, user: str, view: View) -> int:
        """Deliver ``view_closed`` (only sent for views opened with ``notify_on_close``)."""
        payload = {
            "type": "view_closed",
            "team": {"id": TEAM_ID, "domain": "local"},
            "user": self._user(user),
            "api_app_id": APP_ID,
            "token": "local",
            "view": view.to_json(),
            "is_cleared": False,
            "is_enterprise_install": False,
        }
        status, _ = await self.post(_form(payload), "application/x-www-form-urlencoded")
        return status

    def _user(self, user: str) -> dict[str, Any]:
        person = self.workspace.person(user)
        name = person.name if person else user
        return {"id": user, "username": name, "name": name, "team_id": TEAM_ID}


def _action(action: dict[str, Any], block_id: str | None) -> dict[str, Any]:
    """One action of ``block_actions``, as Slack sends it: a button with its ``value``, an
    overflow menu with its ``selected_option``."""
    sent = {
        "type": action.get("type", "button"),
        "action_id": action.get("action_id"),
        "block_id": block_id,
        "action_ts": f"{time.time():.6f}",
    }
    if action.get("type") == "overflow":
        return {**sent, "selected_option": action.get("selected_option")}
    return {
        **sent,
        "text": action.get("text"),
        "value": action.get("value"),
        "style": action.get("style"),
    }


def _form(payload: dict[str, Any]) -> str:
    return "payload=" + quote(json.dumps(payload))
