"""Streamed text is kept until Slack has it (issue 33): an append Slack refuses with 500 or 429
(past the client's own retries) loses nothing; the message ends with everything the model
said, exactly once."""

from __future__ import annotations

import pytest

from bot.slack.delivery._thread import SlackThread
from bot.slack.surfaces._stream_answer import StreamedAnswer
from storage import Storage
from tests.bot.harness import TEAM, Executions, make_agent, start_bot
from tests.bot.slack.test_assistant_threads import DM
from tests.fakes.slack_api import FakeSlackAPI

WORDS = ["The first part, ", "the part Slack refused, ", "and the end."]


@pytest.mark.parametrize(
    ("status", "times", "retry_after"),
    [(500, 3, None), (429, 5, 0)],  # more failures than slack_sdk's own retry handlers take
    ids=["500", "429"],
)
async def test_an_append_slack_refused_is_not_lost(
    slack: FakeSlackAPI, store: Storage, status: int, times: int, retry_after: int | None
) -> None:
    thread = SlackThread(team=TEAM, channel=DM, thread_ts="1690000000.910000", requester="U1")
    agent, _ = make_agent([], Executions())
    async with start_bot(slack, agent, store) as bot:
        answer = StreamedAnswer(bot.services, thread, run_id=f"run-{status}", interval=0)
        await answer.append(WORDS[0])  # starts the stream
        for _ in range(times):
            slack.fail_next(
                "chat.appendStream", status=status, error="internal_error", retry_after=retry_after
            )
        await answer.append(WORDS[1])  # refused
        await answer.append(WORDS[2])
        ts = await answer.finish()
    [message] = slack.thread(DM, thread.thread_ts)
    assert message.ts == ts
    assert message.text == "".join(WORDS).strip()  # every word, each once, in order
    assert slack.surfaces.streaming == set()  # stopped
