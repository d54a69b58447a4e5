"""Nothing dropped, nothing silent: Redis and the model API taken down and brought back.

Each test runs its OWN redis-server on a free loopback port (``OwnRedis``) and stops it by its
pid; the shared services are never touched. ``/readyz`` is polled (bounded), never timed.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from openai import AsyncOpenAI

import bot.slack._messages as msg
from agents import Agent
from agents.models import OpenAIModel, call, reply
from bot import load_settings
from bot._serve import running_bot
from storage import Storage, create_storage
from tests.bot.harness import (
    SECRET,
    Executions,
    click_payload,
    demo_tools,
    make_agent,
    start_bot,
)
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_signing import event_request, interaction_request
from tests.own_servers import OwnRedis

pytestmark = [
    pytest.mark.processes,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    server = OwnRedis(tmp_path)  # not started: each test decides
    try:
        yield server
    finally:
        server.stop()


def _settings(slack: FakeSlackAPI, redis: OwnRedis) -> Any:
    return load_settings(
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


def _mention(ts: str, event_id: str) -> dict[str, Any]:
    return {
        "type": "event_callback",
        "team_id": "T1",
        "event_id": event_id,
        "event": {
            "type": "app_mention",
            "user": "U1",
            "text": "<@UBOT> hi",
            "ts": ts,
            "channel": "C1",
        },
    }


async def _ready(http: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, Any]]:
    async with http.get(f"{base}/readyz") as response:
        return response.status, await response.json()


async def _until_ready(http: aiohttp.ClientSession, base: str) -> dict[str, Any]:
    for _ in range(100):
        status, body = await _ready(http, base)
        if status == 200:
            return body
        await asyncio.sleep(0.2)
    pytest.fail(f"/readyz never became ready: {body}")


def _outage_lines(caplog: pytest.LogCaptureFixture, service: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bot.ops._outage" and r.getMessage().startswith(f"{service} is unavailable")
    ]


async def test_started_with_redis_down_it_serves_health_and_503_readiness_then_becomes_ready(
    slack: FakeSlackAPI, redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    agent, _ = make_agent([], Executions())
    async with running_bot(_settings(slack, redis), agent=agent) as (_, runner):
        [address] = runner.addresses
        base = f"http://127.0.0.1:{address[1]}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as health:
                assert health.status == 200
            status, body = await _ready(http, base)
            assert status == 503
            assert body["ready"] is False
            assert body["checks"]["storage"] == "ok" and body["checks"]["slack"] == "ok"
            assert body["checks"]["redis"].startswith("unreachable")
            started = [r for r in caplog.records if "REDIS_URL does not answer" in r.getMessage()]
            assert len(started) == 1 and started[0].exc_info is None

            await redis.start()
            body = await _until_ready(http, base)
            assert body == {
                "ready": True,
                "checks": {"storage": "ok", "slack": "ok", "redis": "ok", "draining": "ok"},
            }

            redis.stop()
            for _ in range(100):
                status, body = await _ready(http, base)
                if status == 503:
                    break
                await asyncio.sleep(0.2)
            assert body["checks"]["redis"] != "ok"
            await redis.start()
            await _until_ready(http, base)
    assert not [r for r in caplog.records if r.exc_info is not None]


async def test_a_mention_while_redis_is_down_gets_503_so_slack_retries_and_is_answered_once(
    slack: FakeSlackAPI, redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await redis.start()
    agent, _ = make_agent([reply("Answered after the outage.")], Executions())
    async with running_bot(_settings(slack, redis), agent=agent) as (services, runner):
        [address] = runner.addresses
        url = f"http://127.0.0.1:{address[1]}/slack/events"
        redis.stop()
        async with aiohttp.ClientSession() as http:
            for retry in (None, 1):
                body, headers = event_request(_mention("7.0", "EvDown"), SECRET, retry_num=retry)
                async with http.post(url, data=body, headers=headers) as response:
                    assert response.status == 503
            await services.runner.drain()
            told = [m.text for m in slack.thread("C1", "7.0")]
            assert told == [msg.UNAVAILABLE["redis"]]  # the person is told, once, not per retry
            await redis.start()
            body, headers = event_request(_mention("7.0", "EvDown"), SECRET, retry_num=2)
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200
        await services.runner.drain()
        assert [m.text for m in slack.thread("C1", "7.0")] == [
            msg.UNAVAILABLE["redis"],
            "Answered after the outage.",
        ]
    assert len(_outage_lines(caplog, "redis")) == 1
    assert any(r.getMessage() == "redis answers again" for r in caplog.records)
    assert not [r for r in caplog.records if r.exc_info is not None]


async def test_a_click_while_redis_is_down_gets_an_ephemeral_and_changes_nothing(
    slack: FakeSlackAPI, redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.start()
    executions = Executions()
    agent, _ = make_agent([call("delete_record", {"id": "abc"}), reply("Deleted abc.")], executions)
    async with running_bot(_settings(slack, redis), agent=agent) as (services, runner):
        [address] = runner.addresses
        url = f"http://127.0.0.1:{address[1]}/slack/events"
        async with aiohttp.ClientSession() as http:
            body, headers = event_request(_mention("8.0", "EvCard"), SECRET)
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200
            await services.runner.drain()
            [card] = [m for m in slack.thread("C1", "8.0") if m.blocks]
            payload = click_payload(card, "approval:approve", user="U2")

            redis.stop()
            body, headers = interaction_request(payload, SECRET)
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200
            await services.runner.drain()
            [ephemeral] = slack.calls_to("chat.postEphemeral")
            assert ephemeral["user"] == "U2"
            assert ephemeral["text"] == msg.NOT_RECORDED.format(service="Redis (REDIS_URL)")
            assert executions.calls == [] and slack.calls_to("chat.update") == []

            await redis.start()
            body, headers = interaction_request(payload, SECRET)
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200
            await services.runner.drain()
    assert executions.of("delete_record") == [{"id": "abc"}]
    assert "Deleted abc." in [m.text for m in slack.thread("C1", "8.0")]
    assert len(_outage_lines(caplog, "redis")) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_unreachable_model_api_is_told_in_the_thread_and_logged_in_one_line(
    slack: FakeSlackAPI, store: Storage, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    client = AsyncOpenAI(api_key="sk-test", base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    agent = Agent(
        id="ops",
        name="Ops",
        model=OpenAIModel("gpt-test", client=client, max_retries=0),
        tools=demo_tools(Executions()),
    )
    try:
        async with start_bot(slack, agent, store) as bot:
            ts = await bot.mention("hello")
            await bot.settle()
            assert bot.texts(ts) == [msg.UNAVAILABLE["model"]]
            ts = await bot.mention("again")
            await bot.settle()
            assert bot.texts(ts) == [msg.UNAVAILABLE["model"]]
    finally:
        await client.close()
    assert len(_outage_lines(caplog, "model")) == 1
    assert not [r for r in caplog.records if r.exc_info is not None]


async def test_with_storage_down_a_mention_gets_503_and_a_click_an_ephemeral(
    slack: FakeSlackAPI, redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    await redis.start()
    storage = create_storage(redis.url)
    executions = Executions()
    agent, _ = make_agent([call("delete_record", {"id": "s1"}), reply("Deleted s1.")], executions)
    try:
        async with start_bot(slack, agent, storage) as bot:
            ts = await bot.mention("delete s1")
            await bot.settle()
            [card] = bot.cards(ts)
            redis.stop()
            response = await bot.click(card, "approval:approve")
            assert response.status == 200
            await bot.settle()
            [ephemeral] = slack.calls_to("chat.postEphemeral")
            assert ephemeral["text"] == msg.NOT_RECORDED.format(
                service="the database (STORAGE_URL)"
            )
            refused = await bot.send_event(
                {"type": "app_mention", "user": "U1", "text": "<@UBOT> hi", "ts": "9.0",
                 "channel": "C1", "team": "T1"}
            )  # fmt: skip
            assert refused.status == 503
            await bot.settle()
            assert [m.text for m in slack.thread("C1", "9.0")] == [msg.UNAVAILABLE["storage"]]
            status = await bot.http.get("/readyz")
            assert status.status == 503
            assert (await status.json())["checks"]["storage"].startswith("unreachable")
            assert executions.calls == []

            await redis.start()
            assert (await bot.click(card, "approval:approve")).status == 200
            await bot.settle()
            assert executions.of("delete_record") == [{"id": "s1"}]
    finally:
        await storage.close()
    assert len(_outage_lines(caplog, "storage")) == 1
    assert not [r for r in caplog.records if r.exc_info is not None]


async def test_started_with_the_database_unreachable_it_serves_and_says_what_to_check(
    slack: FakeSlackAPI, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(
        {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.base_url,
            "STORAGE_URL": f"postgresql+asyncpg://cs:hunter2@127.0.0.1:{_closed_port()}/cs",
            "HOST": "127.0.0.1",
            "PORT": "0",
        }
    )
    agent, _ = make_agent([], Executions())
    async with running_bot(settings, agent=agent) as (services, runner):
        [address] = runner.addresses
        base = f"http://127.0.0.1:{address[1]}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as health:
                assert health.status == 200
            status, body = await _ready(http, base)
        await services.runner.drain()
    assert status == 503
    assert body["checks"]["slack"] == "ok"
    assert body["checks"]["storage"].startswith("unreachable") and "STORAGE_URL" in str(body)
    assert "hunter2" not in str(body)
    assert len(_outage_lines(caplog, "storage")) == 1
    assert not [r for r in caplog.records if r.exc_info is not None]


async def test_a_decision_shown_while_redis_is_down_reaches_the_thread_once_redis_is_back(
    slack: FakeSlackAPI, redis: OwnRedis, tmp_path: Path
) -> None:
    """Found by the chaos test (and issue 25): a decided call's outcome was dropped with a
    traceback when the thread lock (Redis) could not be taken; it now waits for Redis."""
    import dataclasses

    import redis.asyncio as aioredis

    from agents import Approve
    from bot.coordination import RedisThreadLocks
    from bot.slack.delivery._shown import show_decided
    from storage import InMemoryStorage, utcnow
    from tests.bot.harness import Executions, make_agent, start_bot

    executions = Executions()
    agent, _ = make_agent([call("delete_record", {"id": "5"}), reply("Deleted 5.")], executions)
    await redis.start()
    client = aioredis.Redis.from_url(redis.url)
    try:
        async with start_bot(slack, agent, InMemoryStorage()) as bot:
            services = dataclasses.replace(bot.services, locks=RedisThreadLocks(client))
            ts = await bot.mention("delete record 5", user="U1")
            await bot.settle()
            assert len(bot.cards(ts)) == 1
            [run] = (await bot.agent.list_suspended_runs()).runs
            [pending] = run.tool_calls
            redis.stop()
            stream = await bot.agent.approve_tool_call(
                run_id=run.run_id, tool_call_id=pending.tool_call_id, decided_by="U2"
            )
            shown = asyncio.create_task(
                show_decided(
                    services,
                    Approve(),
                    run_id=run.run_id,
                    tool_call_id=pending.tool_call_id,
                    by="U2",
                    at=utcnow(),
                    stream=stream,
                )
            )
            await asyncio.sleep(1.0)  # Redis down: it waits rather than dropping the outcome
            assert not shown.done() and bot.texts(ts) == []
            await redis.start()
            await asyncio.wait_for(shown, 30)
            assert bot.texts(ts).count("Deleted 5.") == 1
            assert executions.of("delete_record") == [{"id": "5"}]
    finally:
        await client.aclose()
