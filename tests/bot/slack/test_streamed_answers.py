"""SPEC 16 streamed answers: the fallback to post + update (once, remembered, silent), a stream
interrupted by a restart completed once, the append throttle, a stream Slack ended."""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agents.models import call, reply
from bot.background._periodic import Background
from bot.slack.delivery._outbox import flush_outbox
from bot.slack.delivery._thread import SlackThread
from bot.slack.surfaces._stream_answer import StreamedAnswer, open_stream_key
from storage import ClaimRecord, Storage, utcnow
from tests.bot.conftest import BotFactory
from tests.bot.harness import TEAM, Executions, make_agent, start_bot
from tests.bot.slack.test_assistant_threads import DM, ask, open_assistant_thread
from tests.fakes.slack_agent_api import STREAM_METHODS
from tests.fakes.slack_api import FakeSlackAPI


async def test_where_streaming_is_not_available_the_answer_is_posted_once_and_remembered(
    slack: FakeSlackAPI, bot_with: BotFactory
) -> None:
    slack.fail_next("chat.startStream", error="unknown_method")
    async with bot_with([reply("First answer."), reply("Second answer.")]) as (bot, _):
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "one")
        await ask(bot, thread_ts, "two")
        texts = [m.text for m in slack.thread(DM, thread_ts)]
    assert texts == ["First answer.", "Second answer."]  # no error shown, nothing lost
    assert len(slack.calls_to("chat.startStream")) == 1  # not tried again
    assert slack.calls_to("chat.appendStream") == []
    assert len(slack.calls_to("chat.postMessage")) == 2  # posted, then updated as it grew


async def test_another_streaming_error_is_not_taken_for_no_streaming(
    slack: FakeSlackAPI, bot_with: BotFactory
) -> None:
    slack.fail_next("chat.startStream", error="channel_not_found")
    async with bot_with([reply("Lost."), reply("Streamed.")]) as (bot, _):
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "one")
        await ask(bot, thread_ts, "two")
    assert len(slack.calls_to("chat.startStream")) == 2  # streaming stays on
    assert [m.text for m in slack.thread(DM, thread_ts)][-1] == "Streamed."


async def test_a_stream_interrupted_by_a_restart_is_completed_once(
    slack: FakeSlackAPI, store: Storage
) -> None:
    thread = SlackThread(team=TEAM, channel=DM, thread_ts="1690000000.900000", requester="U1")
    agent, _ = make_agent([], Executions())
    async with start_bot(slack, agent, store) as first:
        answer = StreamedAnswer(first.services, thread, run_id="run-1", interval=0)
        await answer.append("Deleted rec")  # the process stops here, mid-answer
    [interrupted] = slack.thread(DM, thread.thread_ts)
    assert interrupted.ts in slack.surfaces.streaming

    agent, _ = make_agent([], Executions())
    async with start_bot(slack, agent, store) as second:  # the run's next delivery
        answer = StreamedAnswer(second.services, thread, run_id="run-1", interval=0)
        await answer.append("Deleted record a.")
        assert await answer.finish() == interrupted.ts
        again = StreamedAnswer(second.services, thread, run_id="run-1", interval=0)
        await again.append("Anything else?")  # a later answer of the run streams anew
        await again.finish()
    messages = slack.thread(DM, thread.thread_ts)
    assert [m.text for m in messages] == ["Deleted record a.", "Anything else?"]
    assert slack.surfaces.streaming == set()
    assert len(slack.calls_to("chat.startStream")) == 2


async def test_appends_are_at_most_one_per_interval(slack: FakeSlackAPI, store: Storage) -> None:
    now = [0.0]
    at: list[tuple[str, float]] = []

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    async def seen(method: str) -> Any:
        async def observe(args: dict[str, Any]) -> None:
            at.append((method, now[0]))

        return observe

    for method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
        slack.on(method, await seen(method))
    thread = SlackThread(team=TEAM, channel=DM, thread_ts="1690000000.900001", requester="U1")
    agent, _ = make_agent([], Executions())
    async with start_bot(slack, agent, store) as bot:
        answer = StreamedAnswer(
            bot.services, thread, run_id="run-2", interval=0.5, clock=lambda: now[0], sleep=sleep
        )
        for word in ["One", " two", " three", " four", " five"]:
            await answer.append(word)
            await asyncio.sleep(0.05)  # a write the throttle's timer makes is answered
            now[0] += 0.1
        await answer.task("call-1", "list-records", "in_progress")
        await answer.finish()
    appends = [t for m, t in at if m != "chat.stopStream"]
    assert at[0][0] == "chat.startStream"
    assert [m for m, _ in at].count("chat.appendStream") >= 2
    assert all(b - a >= 0.5 for a, b in itertools.pairwise(appends))
    [message] = slack.thread(DM, thread.thread_ts)
    assert message.text == "One two three four five"  # nothing held back was lost
    assert [b["status"] for b in message.blocks] == ["in_progress"]


async def test_a_stream_slack_ended_is_completed_by_an_update(
    slack: FakeSlackAPI, store: Storage
) -> None:
    thread = SlackThread(team=TEAM, channel=DM, thread_ts="1690000000.900002", requester="U1")
    agent, _ = make_agent([], Executions())
    async with start_bot(slack, agent, store) as bot:
        answer = StreamedAnswer(bot.services, thread, run_id="run-3", interval=0)
        await answer.append("Half")
        slack.surfaces.stop_all()  # e.g. the stream's time ran out
        await answer.append(" and the rest.")
        await answer.finish()
    [message] = slack.thread(DM, thread.thread_ts)
    assert message.text == "Half and the rest."
    assert any(c["ts"] == message.ts for c in slack.calls_to("chat.update"))


async def test_slack_down_mid_stream_completes_the_streamed_message_once_it_answers(
    slack: FakeSlackAPI, bot_with: BotFactory
) -> None:
    async def go_down(args: dict[str, Any]) -> None:
        slack.down = "5xx"

    script = [call("delete_record", {"id": "a"}), reply("Deleted record a for you.")]
    async with bot_with(script) as (bot, _):
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        [card] = bot.cards(thread_ts, channel=DM)
        slack.on("chat.appendStream", go_down)  # Slack stops answering mid-answer
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
        slack.down = None
        slack._observers.clear()
        assert await flush_outbox(bot.services) >= 1
    answers = [m for m in slack.thread(DM, thread_ts) if not bot_card(m)]
    assert [m.text for m in answers][-1] == "Deleted record a for you."
    assert sum("Deleted record" in m.text for m in answers) == 1  # written once, not twice
    [task] = answers[-1].blocks  # into the message that streamed, not posted anew
    assert task["type"] == "task_card"
    assert slack.calls_to("chat.postMessage")[-1]["blocks"]  # the last post was the card


def bot_card(message: Any) -> bool:
    return any(b["type"] == "actions" or b["type"] == "header" for b in message.blocks)


async def test_the_fake_refuses_a_chunk_slack_sdk_refuses(slack: FakeSlackAPI) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
    bad = {
        "type": "blocks",
        "blocks": [{"type": "task_card", "task_id": "1", "title": "x", "status": "done"}],
    }
    with pytest.raises(SlackApiError) as refused:
        await client.chat_startStream(channel=DM, thread_ts="1.1", chunks=[bad])
    assert refused.value.response["error"] == "invalid_arguments"
    with pytest.raises(SlackApiError) as channel:
        await client.chat_startStream(channel="C1", thread_ts="1.1", markdown_text="hi")
    assert channel.value.response["error"] == "invalid_arguments"  # a channel needs its recipient


async def test_a_crashed_instances_open_stream_is_completed_by_the_recovered_run(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script = [
        call("delete_record", {"id": "9"}),
        lambda request: reply("Record 9 was not deleted: " + (request.messages[-1].content or "")),
    ]
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete record 9")
        [run] = (await bot.agent.list_suspended_runs()).runs
        call_id = run.tool_calls[0].tool_call_id
        # Another instance claimed the approval, started streaming the call's progress, and died
        # before the tool finished: its stream is left open.
        await store.claim(
            ClaimRecord(
                run_id=run.run_id,
                key=f"{call_id}#0",
                tool_call_id=call_id,
                decision="approved",
                decided_by="U2",
                decided_at=utcnow() - timedelta(hours=1),
            )
        )
        left = await bot.services.client.chat_startStream(
            channel=DM,
            thread_ts=thread_ts,
            chunks=[{"type": "markdown_text", "text": "Deleting rec"}],
        )
        await store.add_if_absent(open_stream_key(run.run_id), str(left["ts"]), 3600)
        background = Background(bot.services).start()
        await bot.settle()
        await background.stop()
    assert executions.of("delete_record") == []
    completed = slack.messages[str(left["ts"])]
    assert completed.text.startswith("Record 9 was not deleted")  # completed in place
    assert completed.ts not in slack.surfaces.streaming
    answers = [m for m in slack.thread(DM, thread_ts) if "Record 9" in m.text]
    assert answers == [completed]  # once, not a second message
    assert slack.surfaces.status_of(DM, thread_ts) == ""


async def test_the_answer_goes_through_slack_sdks_chat_stream_with_task_update_chunks(
    slack: FakeSlackAPI, bot_with: BotFactory
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Deleted record a.")]
    async with bot_with(script) as (bot, _):
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        [card] = bot.cards(thread_ts, channel=DM)
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
    starts = slack.calls_to("chat.startStream")
    assert starts and all(s["task_display_mode"] == "timeline" for s in starts)  # ChatStream's
    sent = [c for m in slack.calls if m.method in STREAM_METHODS for c in m.get("chunks", [])]
    tasks = [c["status"] for c in sent if c["type"] == "task_update"]
    assert tasks == ["pending", "complete", "in_progress", "complete"]  # asked, then ran
    assert not any(c["type"] == "blocks" for c in sent)  # tool progress: task updates only
    [answer] = [m for m in slack.thread(DM, thread_ts) if "Deleted record a." in m.text]
    assert [b["type"] for b in answer.blocks] == ["task_card"]  # as Slack shows a task update
