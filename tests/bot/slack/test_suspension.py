"""A suspended tool's question is posted; a reply in the thread answers it (auto-resume), and
one reply reads its thread's pending calls once."""

from __future__ import annotations

from typing import Any, cast

import pytest

from agents.models import call, calls, obj, reply
from storage import InMemoryStorage, Storage
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, TEAM, Executions, make_agent, start_bot
from tests.counting import CountingStorage
from tests.fakes.slack_api import FakeSlackAPI

ASK = call("open_ticket", {"title": "Printer on fire"})


async def test_question_is_posted_and_a_reply_resumes_the_tool(
    bot_with: BotFactory, executions: Executions
) -> None:
    script = [ASK, obj({"answered": True, "resume_data": {"priority": "high"}}), reply("Opened.")]
    async with bot_with(script) as (bot, model):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        [question] = bot.slack.thread(CHANNEL, ts)
        assert "Which priority: low, normal or high?" in str(question.blocks)
        assert executions.of("open_ticket") == []

        await bot.message("high please", thread_ts=ts, user="U1")
        await bot.settle()

        assert executions.of("open_ticket") == [{"title": "Printer on fire", "priority": "high"}]
        assert model.requests[1].response_schema is not None
        assert bot.texts(ts)[-1] == "Opened."
        pending = await bot.services.agent.list_suspended_runs(
            thread_id=f"slack:{TEAM}:{CHANNEL}:{ts}"
        )
        assert pending.total == 0


async def test_a_question_answered_by_a_thread_reply_loses_its_button_and_names_who(
    bot_with: BotFactory,
) -> None:
    script = [ASK, obj({"answered": True, "resume_data": {"priority": "high"}}), reply("Opened.")]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        [question] = bot.slack.thread(CHANNEL, ts)
        assert any(b["type"] == "actions" for b in question.blocks)
        await bot.message("high please", thread_ts=ts, user="U7")
        await bot.settle()
        [update] = bot.updates_of(question.ts)
        blocks = str(update["blocks"])
        assert "actions" not in blocks and "<@U7>" in blocks


async def test_reply_that_does_not_answer_is_a_normal_turn(
    bot_with: BotFactory, executions: Executions
) -> None:
    script = [ASK, obj({"answered": False, "resume_data": None}), reply("It is Tuesday.")]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        await bot.message("what day is it?", thread_ts=ts)
        await bot.settle()
        assert executions.of("open_ticket") == []
        [_, answer] = bot.slack.thread(CHANNEL, ts)  # one bot reply to the one message
        assert answer.text == "It is Tuesday."
        assert "It is Tuesday." in str(answer.blocks) and "did not answer" in str(answer.blocks)
        pending = await bot.services.agent.list_suspended_runs(
            thread_id=f"slack:{TEAM}:{CHANNEL}:{ts}"
        )
        assert pending.total == 1


async def test_a_reply_that_does_not_fit_the_schema_gets_the_question_asked_again(
    bot_with: BotFactory, executions: Executions
) -> None:
    unfit = obj({"answered": True, "resume_data": {"urgency": "very"}})  # no `priority`
    script = [
        ASK,
        unfit,
        reply("Noted."),
        obj({"answered": True, "resume_data": {"priority": "low"}}),
        reply("Opened."),
    ]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        await bot.message("very urgent", thread_ts=ts)
        await bot.settle()
        assert executions.of("open_ticket") == []
        [first, asked] = bot.slack.thread(CHANNEL, ts)  # one bot reply to the one message
        again = str(asked.blocks)
        assert "Noted." in again and asked.text == "Noted."
        assert "did not answer" in again and "`priority`" in again
        assert "Which priority: low, normal or high?" in again
        assert any(b["type"] == "actions" for b in asked.blocks)  # Provide details
        assert not any(b["type"] == "actions" for b in first.blocks)  # asked again below
        await bot.message("low", thread_ts=ts)
        await bot.settle()
        assert executions.of("open_ticket") == [{"title": "Printer on fire", "priority": "low"}]
        thread = bot.slack.thread(CHANNEL, ts)
        assert "did not answer" not in str(thread[-1].blocks)
        assert not any(b["type"] == "actions" for m in thread for b in m.blocks)
        answered = str(bot.slack.messages[asked.ts].blocks)  # the card moved to the question
        assert "`low`" in answered and "<@U1>" in answered


async def test_an_answered_question_shows_what_the_tool_received_and_the_reply(
    bot_with: BotFactory,
) -> None:
    script = [
        ASK,
        obj({"answered": True, "resume_data": {"priority": "high"}}),
        reply("Opened."),
    ]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        [question] = bot.slack.thread(CHANNEL, ts)
        await bot.message("make it the most urgent one", thread_ts=ts, user="U7")
        await bot.settle()
        [update] = bot.updates_of(question.ts)
        fields = [f["text"] for b in update["blocks"] for f in b.get("fields") or []]
        assert fields == ["*priority*\n`high`"]  # the resume_data, as arguments are shown
        text = str(update["blocks"])
        assert "From the reply:_ “make it the most urgent one”" in text and "<@U7>" in text


async def test_a_reply_that_answers_is_not_asked_again(
    bot_with: BotFactory,
) -> None:
    script = [ASK, obj({"answered": True, "resume_data": {"priority": "high"}}), reply("Opened.")]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        await bot.message("high", thread_ts=ts)
        await bot.settle()
        assert "did not answer" not in str([m.blocks for m in bot.slack.thread(CHANNEL, ts)])


ASK_AND_DELETE = calls(
    call("open_ticket", {"title": "Printer on fire"}, id="q1"),
    call("delete_record", {"id": "r1"}, id="d1"),
)


@pytest.mark.parametrize(
    ("reply_text", "script", "claims"),
    [
        pytest.param(
            "high", [obj({"answered": True, "resume_data": {"priority": "high"}})], 1, id="answers"
        ),
        pytest.param(
            "what day is it?",
            [obj({"answered": False, "resume_data": None}), reply("Tuesday.")],
            0,
            id="asks-again",
        ),
        pytest.param("approve", [], 0, id="decision-words"),
    ],
)
async def test_a_thread_reply_reads_its_threads_pending_calls_once(
    slack: FakeSlackAPI,
    executions: Executions,
    reply_text: str,
    script: list[Any],
    claims: int,
) -> None:
    counted = CountingStorage(InMemoryStorage())
    agent, _ = make_agent([ASK_AND_DELETE, *script], executions)
    async with start_bot(slack, agent, cast(Storage, counted)) as bot:
        ts = await bot.mention("open a ticket and delete r1")
        await bot.settle()
        assert "Which priority" in str(bot.slack.thread(CHANNEL, ts)[0].blocks)
        counted.reset()
        await bot.message(reply_text, thread_ts=ts)
        await bot.settle()
        assert counted.made("list_snapshots", thread_id=f"slack:{TEAM}:{CHANNEL}:{ts}") == 1
        assert counted.made("load_run_and_escalations") == claims  # only the decisions' reads


async def test_when_the_answer_cannot_take_the_question_it_is_asked_in_a_message_of_its_own(
    bot_with: BotFactory,
) -> None:
    script = [ASK, obj({"answered": False, "resume_data": None}), reply("Tuesday.")]
    async with bot_with(script) as (bot, _):
        ts = await bot.mention("open a ticket: printer on fire")
        await bot.settle()
        bot.slack.fail_next("chat.update", error="msg_too_long")
        await bot.message("what day is it?", thread_ts=ts)
        await bot.settle()
        [first, answer, again] = bot.slack.thread(CHANNEL, ts)
        assert answer.text == "Tuesday." and not answer.blocks
        assert "did not answer" in str(again.blocks) and "Tuesday." not in str(again.blocks)
        assert any(b["type"] == "actions" for b in again.blocks)
        assert not any(b["type"] == "actions" for b in first.blocks)
        assert "Sorry" not in str([m.text for m in bot.slack.thread(CHANNEL, ts)])
