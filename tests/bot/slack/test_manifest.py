"""``manifest.yml`` declares exactly the events, scopes and interactivity the bot uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.models import call
from bot.slack._ids import ACTION_IDS, BOT_EVENTS, BOT_SCOPES, CARD_ACTIONS, VIEW_CALLBACK_IDS
from tests.bot.conftest import BotFactory

MANIFEST = Path(__file__).resolve().parents[3] / "manifest.yml"


@pytest.fixture
def manifest() -> dict[str, Any]:
    data = yaml.safe_load(MANIFEST.read_text())
    assert isinstance(data, dict)
    return data


def test_manifest_is_an_http_mode_app_with_interactivity(manifest: dict[str, Any]) -> None:
    settings = manifest["settings"]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["interactivity"]["request_url"].endswith("/slack/events")
    assert settings["event_subscriptions"]["request_url"].endswith("/slack/events")
    assert settings["socket_mode_enabled"] is False
    assert settings["token_rotation_enabled"] is False
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True  # "Waiting for you"
    assert "app_home_opened" in manifest["settings"]["event_subscriptions"]["bot_events"]
    assert manifest["_metadata"]["major_version"] == 1


def test_manifest_events_and_scopes_are_exactly_what_the_bot_uses(
    manifest: dict[str, Any],
) -> None:
    assert sorted(manifest["settings"]["event_subscriptions"]["bot_events"]) == sorted(BOT_EVENTS)
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
    assert "user" not in manifest["oauth_config"]["scopes"]


async def test_every_subscribed_event_has_a_listener(
    manifest: dict[str, Any], bot_with: BotFactory
) -> None:
    channel_types = {"channels": "channel", "groups": "group", "im": "im"}
    async with bot_with([]) as (bot, _):
        for name in manifest["settings"]["event_subscriptions"]["bot_events"]:
            type_, _, kind = name.partition(".")
            event = {
                "type": type_,
                "user": "U1",
                "text": "x",
                "ts": "1.1",
                "channel": "C9",
                "bot_id": "BOTHER",
            }
            if kind:
                event["channel_type"] = channel_types[kind]
            if type_.startswith("assistant_thread_"):
                event["assistant_thread"] = {
                    "user_id": "U1",
                    "channel_id": "D1",
                    "thread_ts": "1.1",
                    "context": {"channel_id": "C9", "team_id": "T1"},
                }
            response = await bot.send_event(event)
            assert response.status == 200, name
        unlisted = await bot.send_event({"type": "reaction_added", "user": "U1"})
        assert unlisted.status == 404


async def test_every_card_button_has_a_listener(bot_with: BotFactory) -> None:
    async with bot_with([call("delete_record", {"id": "a"})]) as (bot, _):
        ts = await bot.mention("delete a")
        await bot.settle()
        [card] = bot.cards(ts)
        [actions] = [b for b in card.blocks if b["type"] == "actions"]
        assert sorted(e["action_id"] for e in actions["elements"]) == sorted(CARD_ACTIONS)
        responses = [(await bot.click(card, a)).status for a in CARD_ACTIONS]
        assert responses == [200] * len(CARD_ACTIONS)
        await bot.settle()
        actions["elements"][0]["action_id"] = "approval:unknown"
        unknown = await bot.click(card, "approval:unknown")
        assert unknown.status == 404


async def test_every_modal_callback_and_the_provide_button_have_a_listener(
    bot_with: BotFactory,
) -> None:
    async with bot_with([call("open_ticket", {"title": "x"})]) as (bot, _):
        ts = await bot.mention("open a ticket")
        await bot.settle()
        [question] = bot.slack.thread("C1", ts)
        [button] = next(b for b in question.blocks if b["type"] == "actions")["elements"]
        assert button["action_id"] in ACTION_IDS and button["action_id"] not in CARD_ACTIONS
        assert (await bot.click(question, button["action_id"])).status == 200
        await bot.settle()
        for callback_id in VIEW_CALLBACK_IDS:
            response = await bot.submit({"callback_id": callback_id, "private_metadata": "x"})
            assert response.status == 200, callback_id
        unknown = await bot.submit({"callback_id": "approval:unknown-modal"})
        assert unknown.status == 404
