"""A thread reply that looks like a decision never decides a pending approval (SPEC 12)."""

from __future__ import annotations

import pytest

from agents.models import call, reply
from bot.slack.deciding._conversation import looks_like_decision
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, Executions

GATED = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]


@pytest.mark.parametrize("text", ["approve", "Yes, go ahead!", "decline", "LGTM", "no"])
def test_short_decision_words_look_like_a_decision(text: str) -> None:
    assert looks_like_decision(text)


@pytest.mark.parametrize("text", ["what does this delete?", "the id is abc-123", ""])
def test_questions_and_answers_do_not(text: str) -> None:
    assert not looks_like_decision(text)


@pytest.mark.parametrize("text", ["approve", "yes, go ahead", "decline"])
async def test_a_decision_reply_points_to_the_buttons_and_decides_nothing(
    bot_with: BotFactory, executions: Executions, text: str
) -> None:
    async with bot_with(GATED) as (bot, model):
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        asked = len(model.requests)
        before = len(bot.slack.thread(CHANNEL, ts)) + len(bot.slack.calls_to("chat.postEphemeral"))
        await bot.message(text, user="U2", thread_ts=ts)
        await bot.settle()
        assert len(model.requests) == asked  # no model turn
        assert executions.calls == []
        after = len(bot.slack.thread(CHANNEL, ts)) + len(bot.slack.calls_to("chat.postEphemeral"))
        assert after == before + 1  # one bot reply to the one message
        assert [t for t in bot.texts(ts) if "buttons on the card" in t] != []
        page = await bot.services.agent.list_suspended_runs()
        assert [c.tool_name for r in page.runs for c in r.tool_calls] == ["delete_record"]
