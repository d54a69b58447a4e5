"""``manifest.yml`` (the agent view) and ``manifest.assistant-view.yml`` (the legacy assistant
view) pass Slack's manifest schema and declare exactly the events, scopes and interactivity the
bot uses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from agents.models import call
from bot.slack._ids import (
    ACTION_IDS,
    ASSISTANT_VIEW_EVENTS,
    BOT_EVENTS,
    BOT_SCOPES,
    CARD_ACTIONS,
    LISTENED_EVENTS,
    VIEW_CALLBACK_IDS,
)
from tests.bot.conftest import BotFactory
from tests.bot.slack.manifest_schema import validate

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifest.yml"
MANIFESTS = {"manifest.yml": BOT_EVENTS, "manifest.assistant-view.yml": ASSISTANT_VIEW_EVENTS}
"""Each manifest and the events it subscribes to."""


def _load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / name).read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(params=sorted(MANIFESTS))
def manifest(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param) | {"__name__": request.param}


def _body(manifest: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k != "__name__"}


def test_both_manifests_pass_slacks_manifest_schema(manifest: dict[str, Any]) -> None:
    validate(_body(manifest))


def test_the_schema_refuses_what_slack_refuses() -> None:
    good = _load("manifest.yml")
    wrong_key = {**good, "features": {**good["features"], "agent_veiw": {}}}
    long = {"agent_description": "x" * 301}
    too_long = {**good, "features": {**good["features"], "agent_view": long}}
    prompts = [{"title": "a", "message": "a"}] * 5
    too_many = {
        **good,
        "features": {**good["features"], "agent_view": {"suggested_prompts": prompts}},
    }
    for bad in (wrong_key, too_long, too_many):
        with pytest.raises(ValidationError):
            validate(bad)


def test_the_default_manifest_is_the_agent_view_and_the_variant_the_assistant_view() -> None:
    agent, legacy = _load("manifest.yml"), _load("manifest.assistant-view.yml")
    assert "agent_view" in agent["features"] and "assistant_view" not in agent["features"]
    assert "assistant_view" in legacy["features"] and "agent_view" not in legacy["features"]
    assert agent["features"]["agent_view"]["agent_description"]
    same = ("display_information", "oauth_config", "_metadata")
    assert all(agent[k] == legacy[k] for k in same)  # the same bot, only the view differs
    assert {k: v for k, v in agent["settings"].items() if k != "event_subscriptions"} == {
        k: v for k, v in legacy["settings"].items() if k != "event_subscriptions"
    }
    events = {e.partition(".")[0] for e in (*BOT_EVENTS, *ASSISTANT_VIEW_EVENTS)}
    assert events == set(LISTENED_EVENTS) | {"subteam_members_changed", "subteam_updated"}


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
    events = MANIFESTS[manifest["__name__"]]
    assert sorted(manifest["settings"]["event_subscriptions"]["bot_events"]) == sorted(events)
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
            if type_ == "app_context_changed":
                event["context"] = {
                    "entities": [{"type": "slack#/types/channel_id", "value": "C9"}]
                }
            if type_ == "app_home_opened":
                event.update(tab="messages", channel="D9")
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
