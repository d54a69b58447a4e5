"""A click that cannot be recorded gets the same visible answer on every surface (issue 33).

A single card's Approve with storage or Redis down has always said "Could not record your
decision: … Nothing was changed". The same answer reaches whoever clicks "Approve all" on a
batch card (storage stopped, on Redis storage and on PostgreSQL; Redis frozen with SIGSTOP),
a button on the Home tab, Decline's modal or the grant modal's Submit: nothing runs, nothing
is logged as a traceback, and once storage is back the same click decides, on one card.
Each test runs its OWN redis-server / PostgreSQL and stops it by pid.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

import bot.slack._messages as msg
from agents.models import call, calls, reply
from bot import load_settings
from bot._serve import running_bot
from bot.slack._ids import APPROVE_ACTION, APPROVE_ALL_ACTION, GRANT_ACTION, GRANT_VIEW
from bot.slack.blocks._home_view import HOME_BLOCK_PREFIX
from storage import create_storage
from tests.bot.harness import SECRET, Bot, Executions, click_payload, make_agent, start_bot
from tests.bot.slack.test_grants_in_slack import POLICY, _values
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request
from tests.own_servers import OwnPostgres, OwnRedis, postgres_bin

pytestmark = [
    pytest.mark.slow,
    pytest.mark.processes,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]
STORAGE_DOWN = msg.NOT_RECORDED.format(service="the database (STORAGE_URL)")
REDIS_DOWN = msg.NOT_RECORDED.format(service="Redis (REDIS_URL)")
STEP = [
    calls(*(call("delete_record", {"id": str(n)}, id=f"call_{n}") for n in (1, 2))),
    reply("Deleted what you approved."),
]


class _Outage:
    """A storage server of this test: ``stop`` and ``start`` it."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.server: OwnRedis | OwnPostgres = (
            OwnRedis(tmp_path) if kind == "redis" else OwnPostgres()
        )

    async def __aenter__(self) -> _Outage:
        if isinstance(self.server, OwnPostgres):
            self.server.init()
        await self.server.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if isinstance(self.server, OwnPostgres):
            self.server.remove()
        else:
            self.server.stop()

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(params=["redis", "postgres"])
async def outage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[_Outage]:
    if request.param == "postgres" and postgres_bin() is None:
        pytest.skip("needs PostgreSQL's initdb")
    async with _Outage(request.param, tmp_path) as server:
        yield server


@asynccontextmanager
async def _served(
    slack: FakeSlackAPI, url: str, executions: Executions, script: list, **env: str
) -> AsyncIterator[Bot]:
    storage = create_storage(url)
    try:
        agent, _ = make_agent(script, executions)
        async with start_bot(slack, agent, storage, env=env or None) as bot:
            yield bot
    finally:
        await storage.close()


def _all_button(card: PostedMessage) -> PostedMessage:
    """The batch card with its "Approve all" block first (what ``click`` presses)."""
    wanted = [b for b in card.blocks if b.get("block_id") == "batch:all"]
    return dataclasses.replace(card, blocks=wanted + [b for b in card.blocks if b not in wanted])


def _ephemerals(slack: FakeSlackAPI) -> list[str]:
    return [c["text"] for c in slack.calls_to("chat.postEphemeral")]


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info is not None]


async def test_approve_all_with_storage_stopped_says_nothing_was_recorded(
    slack: FakeSlackAPI, outage: _Outage, caplog: pytest.LogCaptureFixture
) -> None:
    executions = Executions()
    async with _served(slack, outage.url, executions, STEP) as bot:
        ts = await bot.mention("delete 1 and 2")
        await bot.settle()
        [card] = bot.cards(ts)
        outage.server.stop()
        assert (await bot.click(_all_button(card), APPROVE_ALL_ACTION)).status == 200
        await bot.settle()
        assert _ephemerals(slack) == [STORAGE_DOWN]
        assert executions.calls == []

        await outage.server.start()
        assert (await bot.click(_all_button(card), APPROVE_ALL_ACTION)).status == 200
        await bot.settle()
        assert sorted(c["id"] for c in executions.of("delete_record")) == ["1", "2"]
        assert len(bot.cards(ts)) == 1  # one batch card, never a card per call
        assert "Deleted what you approved." in bot.texts(ts)
    assert _tracebacks(caplog) == []


async def test_approve_all_with_redis_frozen_says_nothing_was_recorded(
    slack: FakeSlackAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis = OwnRedis(tmp_path)
    await redis.start()
    executions = Executions()
    agent, _ = make_agent(STEP, executions)
    settings = load_settings(
        {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.base_url,
            "STORAGE_URL": "memory://",
            "REDIS_URL": redis.url,
            "HOST": "127.0.0.1",
            "PORT": "0",
        }
    )
    try:
        async with running_bot(settings, agent=agent) as (services, runner):
            [address] = runner.addresses
            url = f"http://127.0.0.1:{address[1]}/slack/events"
            mention = {
                "type": "event_callback",
                "team_id": "T1",
                "event_id": "EvBatch",
                "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> delete 1 and 2",
                          "ts": "8.0", "channel": "C1"},
            }  # fmt: skip
            async with aiohttp.ClientSession() as http:
                body, headers = event_request(mention, SECRET)
                async with http.post(url, data=body, headers=headers) as response:
                    assert response.status == 200
                await services.runner.drain()
                [card] = [m for m in slack.thread("C1", "8.0") if m.blocks]
                payload = click_payload(_all_button(card), APPROVE_ALL_ACTION, user="U2")

                assert redis.process is not None
                os.kill(redis.process.pid, signal.SIGSTOP)  # frozen: connected, no answer
                try:
                    body, headers = interaction_request(payload, SECRET)
                    async with http.post(url, data=body, headers=headers) as response:
                        assert response.status == 200
                    await services.runner.drain()
                finally:
                    os.kill(redis.process.pid, signal.SIGCONT)
                assert _ephemerals(slack) == [REDIS_DOWN]
                assert executions.calls == []
    finally:
        redis.stop()
    assert _tracebacks(caplog) == []


async def test_a_home_tab_click_with_storage_stopped_is_told_on_the_home_tab(
    slack: FakeSlackAPI, outage: _Outage, caplog: pytest.LogCaptureFixture
) -> None:
    executions = Executions()
    script = [call("delete_record", {"id": "h"}), reply("Deleted h.")]
    async with _served(slack, outage.url, executions, script) as bot:
        await bot.mention("delete h")
        await bot.settle()
        body, headers = event_request(
            {"type": "event_callback", "team_id": "T1", "event_id": "EvHome",
             "event": {"type": "app_home_opened", "user": "U2", "tab": "home"}},
            SECRET,
        )  # fmt: skip
        assert (await bot.http.post("/slack/events", data=body, headers=headers)).status == 200
        await bot.settle()
        outage.server.stop()
        response = await bot.click_home(f"{HOME_BLOCK_PREFIX}0", APPROVE_ACTION, user="U2")
        assert response.status == 200
        await bot.settle()
        assert STORAGE_DOWN in repr(slack.homes["U2"]["blocks"])
        assert executions.calls == []
    assert _tracebacks(caplog) == []


async def test_declines_modal_submitted_with_storage_stopped_says_nothing_was_recorded(
    slack: FakeSlackAPI, outage: _Outage, caplog: pytest.LogCaptureFixture
) -> None:
    executions = Executions()
    script = [call("delete_record", {"id": "d"}), reply("Not deleted.")]
    async with _served(slack, outage.url, executions, script) as bot:
        ts = await bot.mention("delete d")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, "approval:decline")).status == 200
        await bot.settle()
        [view] = bot.opened_views()
        outage.server.stop()
        values = {"reason": {"value": {"type": "plain_text_input", "value": "no"}}}
        assert (await bot.submit(view, values)).status == 200
        await bot.settle()
        assert _ephemerals(slack) == [STORAGE_DOWN]
        assert not any(b["type"] != "actions" and "Declined" in str(b) for b in card.blocks)
    assert _tracebacks(caplog) == []


async def test_the_grant_modal_submitted_with_storage_stopped_says_nothing_was_recorded(
    slack: FakeSlackAPI, outage: _Outage, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    policy = tmp_path / "countersign.toml"
    policy.write_text(POLICY, encoding="utf-8")
    executions = Executions()
    script = [call("delete_record", {"id": "a"}), reply("Deleted a.")]
    env = {"POLICY_FILE": str(policy), "APPROVERS": "U2,U4"}
    async with _served(slack, outage.url, executions, script, **env) as bot:
        ts = await bot.mention("delete a", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, GRANT_ACTION)).status == 200
        await bot.settle()
        [view] = bot.opened_views()
        assert view["callback_id"] == GRANT_VIEW
        outage.server.stop()
        assert (await bot.submit(view, _values(seconds=3600, uses=2))).status == 200
        await bot.settle()
        assert _ephemerals(slack) == [STORAGE_DOWN]
        assert executions.calls == []
    assert _tracebacks(caplog) == []
