"""A decision taken through the API while every Slack method fails, then storage stopped while
the outbox makes its first write, and both brought back (issue 33): the card reaches its
outcome and the answer is posted, once each, and both outages are logged (one line each).
Runs its OWN PostgreSQL and stops it by pid."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from agents.models import call, reply
from bot.background._periodic import Background
from storage import create_storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.bot.slack.test_outbox import TOKEN, _approve_through_the_api
from tests.fakes.slack_api import FakeSlackAPI
from tests.own_servers import OwnPostgres, postgres_bin

pytestmark = [
    pytest.mark.slow,
    pytest.mark.processes,
    pytest.mark.skipif(postgres_bin() is None, reason="needs PostgreSQL's initdb"),
]


async def test_an_api_decision_through_a_slack_outage_and_a_storage_stop_reaches_slack_once(
    slack: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    postgres = OwnPostgres()
    postgres.init()
    await postgres.start()
    store = create_storage(postgres.url)
    executions = Executions()
    stopped: list[float] = []

    async def stop_storage(args: dict[str, Any]) -> None:  # the outbox's first write
        if not stopped and slack.down is None:
            stopped.append(time.monotonic())
            await asyncio.to_thread(postgres.stop)

    try:
        agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
        env = {"API_TOKEN": TOKEN, "API_TOKEN_ACTS_FOR_USERS": "true", "CLAIM_LEASE_SECONDS": "2"}
        async with start_bot(slack, agent, store, env=env) as bot:
            ts = await bot.mention("delete record 7", user="U1")
            await bot.settle()
            slack.down = "5xx"  # every Slack method fails
            await _approve_through_the_api(bot)
            await bot.settle()
            assert executions.of("delete_record") == [{"id": "7"}]
            slack.on("chat.update", stop_storage)
            slack.on("chat.postMessage", stop_storage)
            background = Background(bot.services).start()
            try:
                slack.down = None
                for _ in range(400):  # bounded: the outbox tries every second
                    if stopped:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(1.0)
                await postgres.start()  # both back
                for _ in range(1200):
                    [card] = bot.cards(ts)
                    done = not any(b["type"] == "actions" for b in card.blocks)
                    if done and "Deleted 7." in bot.texts(ts):
                        break
                    await asyncio.sleep(0.05)
            finally:
                await background.stop()
            await bot.settle()
            [card] = bot.cards(ts)
            assert stopped
            assert not any(b["type"] == "actions" for b in card.blocks)
            assert "Approved by alice" in str(card.blocks)
            assert bot.texts(ts).count("Deleted 7.") == 1
    finally:
        await store.close()
        postgres.remove()
    outages = [r.getMessage() for r in caplog.records if r.name == "bot.ops._outage"]
    assert any(m.startswith("slack is unavailable") for m in outages), outages
    assert any(m.startswith("storage is unavailable") for m in outages), outages
