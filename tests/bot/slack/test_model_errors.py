"""A model that cannot answer tells the thread what to fix, in one sentence, with no traceback.

The README's own ``BOT_AGENT`` example run without ``OPENAI_API_KEY`` used to answer "Sorry, I
could not finish that (MODEL_ERROR)" while the useful sentence sat in the log with a traceback.
"""

from __future__ import annotations

import logging

import pytest

from agents import Agent
from agents.models import OpenAIModel
from storage import InMemoryStorage
from tests.bot.harness import start_bot
from tests.fakes.slack_api import FakeSlackAPI


async def test_no_api_key_is_one_sentence_in_the_thread_and_no_traceback(
    slack: FakeSlackAPI, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = Agent(id="ops", model=OpenAIModel("gpt-5-mini"), instructions="Help.")
    async with start_bot(slack, agent, InMemoryStorage()) as bot:
        ts = await bot.mention("hello")
        await bot.settle()
        [answer] = bot.texts(ts)
    assert "OPENAI_API_KEY" in answer and "MODEL_ERROR" not in answer
    assert answer.count(".") <= 2  # one sentence (and the key's name)
    assert [r for r in caplog.records if r.exc_info] == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
