"""Mentions, DMs and thread replies reach the agent; the answer is posted in the thread."""

from __future__ import annotations

from agents.models import reply
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, TEAM


async def test_mention_is_answered_in_its_thread(bot_with: BotFactory) -> None:
    async with bot_with([reply("Hi there, how can I help?")]) as (bot, model):
        ts = await bot.mention("hello")
        await bot.settle()
        assert bot.texts(ts) == ["Hi there, how can I help?"]
        assert model.requests[0].messages[-1].content == "hello"
        stored = await bot.services.storage.list_messages(f"slack:{TEAM}:{CHANNEL}:{ts}")
        assert [m.role for m in stored] == ["user", "assistant"]


async def test_answer_streams_into_one_message(bot_with: BotFactory) -> None:
    async with bot_with([reply("one two three four")]) as (bot, _):
        ts = await bot.mention("count")
        await bot.settle()
        [answer] = bot.slack.thread(CHANNEL, ts)
        assert answer.text == "one two three four"
        assert len(bot.slack.calls_to("chat.postMessage")) == 1
        assert answer.updates >= 1


async def test_thread_reply_continues_the_same_memory_thread(bot_with: BotFactory) -> None:
    async with bot_with([reply("First."), reply("Second.")]) as (bot, model):
        ts = await bot.mention("hello")
        await bot.settle()
        await bot.message("and then?", thread_ts=ts)
        await bot.settle()
        assert bot.texts(ts) == ["First.", "Second."]
        contents = [m.content for m in model.requests[1].messages]
        assert contents[-3:] == ["hello", "First.", "and then?"]


async def test_direct_message_is_answered(bot_with: BotFactory) -> None:
    async with bot_with([reply("Hello in DM")]) as (bot, _):
        ts = await bot.message("hi", channel="D1", channel_type="im")
        await bot.settle()
        assert bot.texts(ts, channel="D1") == ["Hello in DM"]


async def test_plain_reply_in_a_thread_without_the_bot_is_ignored(bot_with: BotFactory) -> None:
    async with bot_with([]) as (bot, model):
        await bot.message("people talking", thread_ts="1690000000.999999")
        await bot.message("top-level chatter")
        await bot.settle()
        assert model.requests == []
        assert bot.slack.calls_to("chat.postMessage") == []


async def test_bot_messages_edits_and_other_subtypes_are_ignored(bot_with: BotFactory) -> None:
    async with bot_with([]) as (bot, model):
        await bot.message("from another bot", channel_type="im", bot_id="BOTHER")
        await bot.message("our own", channel_type="im", bot_id="BBOT", user="UBOT")
        await bot.message("edited", channel_type="im", subtype="message_changed")
        await bot.message("joined", channel_type="im", subtype="channel_join")
        await bot.settle()
        assert model.requests == []
        assert bot.slack.calls_to("chat.postMessage") == []


async def test_retried_event_is_processed_once(bot_with: BotFactory) -> None:
    async with bot_with([reply("Once.")]) as (bot, model):
        ts = await bot.mention("hello", event_id="EvSAME")
        retry = await bot.send_event(
            {
                "type": "app_mention",
                "user": "U1",
                "text": "<@UBOT> hello",
                "ts": ts,
                "channel": CHANNEL,
                "team": TEAM,
            },
            event_id="EvSAME",
            retry_num=1,
        )
        assert retry.status == 200
        await bot.settle()
        assert len(model.requests) == 1
        assert bot.texts(ts) == ["Once."]


async def test_mention_and_message_twins_are_processed_once(bot_with: BotFactory) -> None:
    async with bot_with([reply("First."), reply("Twice?")]) as (bot, model):
        root = await bot.mention("hello")
        await bot.settle()
        ts = await bot.mention("again", thread_ts=root)
        await bot.message("<@UBOT> again", ts=ts, thread_ts=root)
        await bot.settle()
        assert len(model.requests) == 2
        assert bot.texts(root) == ["First.", "Twice?"]


async def test_run_error_is_reported_in_the_thread(bot_with: BotFactory) -> None:
    async with bot_with([]) as (bot, _):
        ts = await bot.mention("hello")
        await bot.settle()
        [message] = bot.texts(ts)
        assert "MODEL_SCRIPT_EXHAUSTED" in message


async def test_a_failure_outside_the_run_is_reported_in_the_thread(bot_with: BotFactory) -> None:
    async with bot_with([reply("never seen")]) as (bot, _):
        bot.slack.fail_next("chat.postMessage", error="msg_too_long")
        ts = await bot.mention("hello")
        await bot.settle()
        [message] = bot.texts(ts)
        assert "SlackApiError" in message


async def test_url_verification_is_answered(bot_with: BotFactory) -> None:
    async with bot_with([]) as (bot, _):
        response = await bot.send_raw({"type": "url_verification", "challenge": "c-123"})
        assert response.status == 200
        assert "c-123" in await response.text()
