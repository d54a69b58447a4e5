"""Signature checking stays on: forged or stale requests get 401 and start nothing."""

from __future__ import annotations

import time

from agents.models import call, reply
from bot import APPROVE_ACTION
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, TEAM, Executions


def _mention(ts: str) -> dict[str, str]:
    return {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> hi",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
    }


async def test_forged_event_gets_401_and_nothing_runs(bot_with: BotFactory) -> None:
    async with bot_with([reply("never")]) as (bot, model):
        response = await bot.send_event(_mention("1.000001"), secret="not-the-secret")
        assert response.status == 401
        await bot.settle()
        assert model.requests == []
        assert bot.slack.calls_to("chat.postMessage") == []


async def test_stale_event_gets_401_and_nothing_runs(bot_with: BotFactory) -> None:
    async with bot_with([reply("never")]) as (bot, model):
        response = await bot.send_event(_mention("1.000002"), timestamp=int(time.time()) - 600)
        assert response.status == 401
        await bot.settle()
        assert model.requests == []


async def test_forged_and_stale_clicks_get_401_and_run_nothing(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with([call("delete_record", {"id": "a"}), reply("done")]) as (bot, _):
        ts = await bot.mention("delete a")
        await bot.settle()
        [card] = bot.cards(ts)
        forged = await bot.click(card, APPROVE_ACTION, secret="forged")
        stale = await bot.click(card, APPROVE_ACTION, timestamp=int(time.time()) - 301)
        assert (forged.status, stale.status) == (401, 401)
        await bot.settle()
        assert executions.of("delete_record") == []
        assert bot.slack.calls_to("chat.update") == []


async def test_rejected_request_body_is_not_logged(bot_with: BotFactory, caplog) -> None:
    caplog.set_level("DEBUG")
    async with bot_with([]) as (bot, _):
        await bot.send_event(_mention("1.000003") | {"text": "SECRET-PAYLOAD"}, secret="x")
    assert "SECRET-PAYLOAD" not in caplog.text
