"""The offline Slack harness: the real aiohttp app + bolt, a fake Web API, signed requests.

``start_bot`` serves the bot exactly as ``python -m bot`` does in HTTP mode (same app factory,
same listeners), on 127.0.0.1, talking to ``FakeSlackAPI``. Requests are signed as Slack signs
them. ``settle()`` waits for the background work a request started (no sleeps).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from pydantic import BaseModel

from agents import Agent, ToolSource
from agents.models import ScriptedModel, ScriptItem
from bot import Services, create_bolt_app, create_services, create_web_app, load_settings
from bot._assembly import serve_agent
from bot._serve import install_api
from bot.ops import Metrics, install_metrics
from bot.slack.deciding._workspace import EdgePolicy
from bot.slack.delivery._webclient import create_web_client
from storage import Storage
from tests.bot.home_payloads import home_click_payload
from tests.fakes.slack_api import ApiCall, FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request
from tools import Tool, ToolContext, create_tool

SECRET = "test-signing-secret"
TEAM = "T1"
CHANNEL = "C1"
BOT_USER = "UBOT"

_ts = itertools.count(1)
_event_ids = itertools.count(1)


def next_ts() -> str:
    """A fresh Slack ``ts`` for a person's message."""
    return f"1690000000.{next(_ts):06d}"


class RecordInput(BaseModel):
    id: str


class TicketInput(BaseModel):
    title: str


class Priority(BaseModel):
    priority: str


@dataclass
class Executions:
    """Every real execution of a test tool: what approvals must guard."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def of(self, tool: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == tool]


def demo_tools(executions: Executions) -> dict[str, Tool]:
    """``delete_record`` (needs approval) and ``open_ticket`` (suspends to ask a priority)."""

    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        executions.calls.append(("delete_record", input.model_dump()))
        return {"deleted": input.id}

    async def ticket(input: TicketInput, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "Which priority: low, normal or high?"})
        executions.calls.append(
            ("open_ticket", {**input.model_dump(), **ctx.resume_data.model_dump()})
        )
        return {"ticket": "T-1", "priority": ctx.resume_data.priority}

    return {
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=RecordInput,
            execute=delete,
            require_approval=True,
        ),
        "open_ticket": create_tool(
            id="open-ticket",
            description="Open a ticket",
            input_schema=TicketInput,
            resume_schema=Priority,
            execute=ticket,
        ),
    }


def make_agent(script: list[ScriptItem], executions: Executions) -> tuple[Agent, ScriptedModel]:
    """An agent on a scripted model, without storage (the bot gives it one)."""
    model = ScriptedModel(script)
    agent = Agent(id="ops", name="Ops", model=model, tools=demo_tools(executions))
    return agent, model


@dataclass
class Bot:
    """A running bot and the ways to talk to it like Slack does."""

    slack: FakeSlackAPI
    http: TestClient
    services: Services

    @property
    def agent(self) -> Agent:
        """The agent as the bot serves it (with the bot's storage, rules and tools)."""
        return self.services.agent.main

    async def settle(self) -> None:
        """Wait until every piece of background work has finished."""
        await self.services.runner.drain()

    async def send_event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        timestamp: int | None = None,
        secret: str = SECRET,
    ) -> ClientResponse:
        envelope = {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
            "event": event,
        }
        return await self.send_raw(
            envelope, retry_num=retry_num, timestamp=timestamp, secret=secret
        )

    async def send_raw(
        self,
        body_json: dict[str, Any],
        *,
        retry_num: int | None = None,
        timestamp: int | None = None,
        secret: str = SECRET,
    ) -> ClientResponse:
        """POST a signed JSON body to ``/slack/events``."""
        body, headers = event_request(body_json, secret, timestamp=timestamp, retry_num=retry_num)
        return await self.http.post("/slack/events", data=body, headers=headers)

    async def mention(
        self,
        text: str,
        *,
        user: str = "U1",
        channel: str = CHANNEL,
        ts: str | None = None,
        thread_ts: str | None = None,
        event_id: str | None = None,
    ) -> str:
        """A person mentions the bot; returns the message ``ts``."""
        ts = ts or next_ts()
        event = _message("app_mention", f"<@{BOT_USER}> {text}", user, channel, ts, thread_ts)
        response = await self.send_event(event, event_id=event_id)
        assert response.status == 200, await response.text()
        return ts

    async def message(
        self,
        text: str,
        *,
        user: str = "U1",
        channel: str = CHANNEL,
        ts: str | None = None,
        thread_ts: str | None = None,
        channel_type: str = "channel",
        event_id: str | None = None,
        **extra: Any,
    ) -> str:
        """A ``message`` event (a thread reply, a DM with ``channel_type="im"`` …)."""
        ts = ts or next_ts()
        event = _message("message", text, user, channel, ts, thread_ts)
        event.update(channel_type=channel_type, **extra)
        response = await self.send_event(event, event_id=event_id)
        assert response.status == 200, await response.text()
        return ts

    async def click(
        self,
        card: PostedMessage,
        action_id: str,
        *,
        user: str = "U2",
        user_team: str = TEAM,
        timestamp: int | None = None,
        secret: str = SECRET,
    ) -> ClientResponse:
        """A person (of workspace ``user_team``) clicks a button of ``card``."""
        payload = click_payload(
            card,
            action_id,
            user=user,
            user_team=user_team,
            response_url=str(self.http.make_url("/response-url-unused")),
        )
        body, headers = interaction_request(payload, secret, timestamp=timestamp)
        return await self.http.post("/slack/events", data=body, headers=headers)

    async def choose(
        self, card: PostedMessage, row: int, kind: str, *, user: str = "U2"
    ) -> ClientResponse:
        """A person picks ``kind`` (``approve``, ``edit``, ``decline``, ``withdraw``,
        ``show-all``, ``grant``) in the ⋯ menu of row ``row`` (from 1) of a batch card."""
        payload = choose_payload(card, row, kind, user=user)
        body, headers = interaction_request(payload, SECRET)
        return await self.http.post("/slack/events", data=body, headers=headers)

    async def open_home(self, user: str = "U2") -> dict[str, Any]:
        """``user`` opens the bot's Home tab; returns the view published for them."""
        event = {"type": "app_home_opened", "user": user, "tab": "home", "event_ts": next_ts()}
        response = await self.send_event(event)
        assert response.status == 200, await response.text()
        await self.settle()
        return self.slack.homes[user]

    async def click_home(
        self, block_id: str, action_id: str, *, user: str = "U2"
    ) -> ClientResponse:
        """``user`` clicks a button of block ``block_id`` on their Home tab."""
        payload = home_click_payload(self.slack.homes[user], block_id, action_id, user=user)
        body, headers = interaction_request(payload, SECRET)
        return await self.http.post("/slack/events", data=body, headers=headers)

    def opened_views(self) -> list[dict[str, Any]]:
        """Every modal the bot opened (``views.open``), oldest first."""
        return [c["view"] for c in self.slack.calls_to("views.open")]

    async def submit(
        self,
        view: dict[str, Any],
        values: dict[str, Any] | None = None,
        *,
        user: str = "U2",
        user_team: str = TEAM,
    ) -> ClientResponse:
        """A person submits a modal the bot opened; ``values`` is ``view.state.values``."""
        payload = {
            "type": "view_submission",
            "team": {"id": TEAM, "domain": "test"},
            "user": {"id": user, "username": user.lower(), "team_id": user_team},
            "api_app_id": "A1",
            "token": "legacy",
            "trigger_id": "trigger-2",
            "view": {
                "id": "V1",
                "type": "modal",
                "team_id": TEAM,
                "callback_id": view["callback_id"],
                "private_metadata": view.get("private_metadata", ""),
                "blocks": view.get("blocks", []),
                "title": view.get("title"),
                "state": {"values": values or {}},
                "hash": "h1",
            },
        }
        body, headers = interaction_request(payload, SECRET)
        return await self.http.post("/slack/events", data=body, headers=headers)

    async def decline(
        self, card: PostedMessage, *, user: str = "U2", reason: str | None = None
    ) -> ClientResponse:
        """Click Decline, then submit the modal it opened (with an optional reason)."""
        before = len(self.opened_views())
        response = await self.click(card, "approval:decline", user=user)
        assert response.status == 200
        await self.settle()
        views = self.opened_views()
        if len(views) == before:
            return response  # refused: no modal
        values = {"reason": {"value": {"type": "plain_text_input", "value": reason}}}
        submitted = await self.submit(views[-1], values, user=user)
        await self.settle()
        return submitted

    def cards(self, thread_ts: str, channel: str = CHANNEL) -> list[PostedMessage]:
        """Messages of a thread that carry (or carried) an approval card."""
        return [m for m in self.slack.thread(channel, thread_ts) if _is_card(m)]

    def texts(self, thread_ts: str, channel: str = CHANNEL) -> list[str]:
        """The plain answers of a thread, as they read now."""
        return [m.text for m in self.slack.thread(channel, thread_ts) if not m.blocks]

    def updates_of(self, ts: str) -> list[ApiCall]:
        return [c for c in self.slack.calls_to("chat.update") if c.args.get("ts") == ts]


def click_payload(
    card: PostedMessage,
    action_id: str,
    *,
    user: str = "U2",
    user_team: str = TEAM,
    response_url: str = "http://127.0.0.1:9/unused",
) -> dict[str, Any]:
    """The ``block_actions`` payload Slack sends when ``user`` clicks a button of ``card``."""
    actions = next(b for b in card.blocks if b["type"] == "actions")
    button = next(e for e in actions["elements"] if e["action_id"] == action_id)
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": user_team},
        "api_app_id": "A1",
        "token": "legacy",
        "team": {"id": TEAM, "domain": "test"},
        "trigger_id": "trigger-1",
        "container": {
            "type": "message",
            "message_ts": card.ts,
            "channel_id": card.channel,
            "is_ephemeral": False,
            "thread_ts": card.thread_ts,
        },
        "channel": {"id": card.channel, "name": "ops"},
        "message": {
            "type": "message",
            "ts": card.ts,
            "thread_ts": card.thread_ts,
            "text": card.text,
            "blocks": card.blocks,
        },
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": actions.get("block_id"),
                "value": button["value"],
                "action_ts": str(time.time()),
            }
        ],
    }


def row_menu(card: PostedMessage, row: int) -> dict[str, Any]:
    """The ⋯ menu (an overflow) of row ``row`` of a batch card."""
    [section] = [b for b in card.blocks if b.get("block_id") == f"approval-actions:{row}"]
    menu = section.get("accessory")
    assert menu is not None and menu["type"] == "overflow", f"row {row} has no menu"
    return dict(menu)


def choose_payload(card: PostedMessage, row: int, kind: str, *, user: str = "U2") -> dict[str, Any]:
    """The ``block_actions`` payload Slack sends when ``user`` picks ``kind`` in row ``row``'s
    ⋯ menu (an overflow: ``selected_option``, no ``value``)."""
    menu = row_menu(card, row)
    [option] = [o for o in menu["options"] if json.loads(o["value"])["k"] == kind]
    base = _bare_click(card, user)
    base["actions"] = [
        {
            "type": "overflow",
            "action_id": menu["action_id"],
            "block_id": f"approval-actions:{row}",
            "selected_option": option,
            "action_ts": str(time.time()),
        }
    ]
    return base


def _bare_click(card: PostedMessage, user: str) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM},
        "api_app_id": "A1",
        "token": "legacy",
        "team": {"id": TEAM, "domain": "test"},
        "trigger_id": "trigger-1",
        "container": {
            "type": "message",
            "message_ts": card.ts,
            "channel_id": card.channel,
            "is_ephemeral": False,
            "thread_ts": card.thread_ts,
        },
        "channel": {"id": card.channel, "name": "ops"},
        "message": {
            "type": "message",
            "ts": card.ts,
            "thread_ts": card.thread_ts,
            "text": card.text,
            "blocks": card.blocks,
        },
        "response_url": "http://127.0.0.1:9/unused",
    }


def _is_card(message: PostedMessage) -> bool:
    return (
        any(
            "approval" in str(b.get("block_id", "")) or b["type"] == "actions"
            for b in message.blocks
        )
        or "Approv" in message.text
        or "Declined" in message.text
        or "Expired" in message.text
        or "Withdrawn" in message.text
    )


def _message(
    type_: str, text: str, user: str, channel: str, ts: str, thread_ts: str | None
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": type_,
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "team": TEAM,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


@asynccontextmanager
async def start_bot(
    slack: FakeSlackAPI,
    agent: Agent,
    storage: Storage,
    *,
    policy: EdgePolicy | None = None,
    env: dict[str, str] | None = None,
    tools: ToolSource | None = None,
) -> AsyncIterator[Bot]:
    """Serve ``agent`` over HTTP like ``python -m bot`` does, against the fake Slack.

    ``env`` adds configuration (``APPROVERS``, ``APPROVAL_TTL_SECONDS`` …); ``tools`` (say, the
    MCP servers') are offered besides the agent's own. The agent served is ``bot.agent``.
    """
    settings = load_settings(
        {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET, **(env or {})}
    )
    client = create_web_client("xoxb-test", api_url=slack.base_url)
    metrics = Metrics()
    served = serve_agent(
        agent,
        settings=settings,
        storage=storage,
        client=client,
        tools=tools,
        observers=(metrics.observer(),),
    )
    services = create_services(
        agent=served.agent,
        policy=served.policy,
        client=client,
        settings=settings,
        workspace=policy,
        stream_interval=0,
        append_interval=0,
    )
    web_app = create_web_app(services, create_bolt_app(services, signing_secret=SECRET))
    install_api(web_app, services)  # mounted only when env sets API_TOKEN, as in production
    install_metrics(web_app, metrics, services.agent)  # GET /metrics, as in production
    async with TestClient(TestServer(web_app, host="127.0.0.1")) as http:
        bot = Bot(slack=slack, http=http, services=services)
        try:
            yield bot
        finally:
            await bot.settle()
