"""Two ``python -m bot`` processes on one PostgreSQL and one Redis (``REDIS_URL``): the same
retried event and the same click reach both at once → one execution, one card update, one
answer. Skipped unless ``TEST_POSTGRES_URL`` and ``TEST_REDIS_URL`` are set (``.ci/run``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError

from bot.coordination import shared_coordination
from bot.coordination._redis import RedisMarks, RedisThreadLocks
from tests.backends import POSTGRES_ENV, REDIS_ENV, _drop_redis_prefix, open_storage, unique_url
from tests.bot.harness import CHANNEL, SECRET, TEAM, click_payload
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        not (os.environ.get(POSTGRES_ENV) and os.environ.get(REDIS_ENV)),
        reason=f"set {POSTGRES_ENV} and {REDIS_ENV} (.ci/run does)",
    ),
]
ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _eventually(check: Callable[[], bool], what: str) -> None:
    """Poll ``check`` (other processes do the work; there is nothing to await)."""
    deadline = time.monotonic() + 30
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _instances(
    slack: FakeSlackAPI,
    storage_url: str,
    redis_url: str,
    executions: Path,
    count: int = 2,
    extra_env: dict[str, str] | None = None,
) -> AsyncIterator[list[str]]:
    """Start ``count`` bot processes; yields their base URLs once each serves /healthz."""
    ports = [_free_port() for _ in range(count)]
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "STORAGE_URL": storage_url,
        "REDIS_URL": redis_url,
        "BOT_AGENT": "tests.bot.instance_agent:agent",
        "EXECUTIONS_FILE": str(executions),
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
        "HOST": "127.0.0.1",
        **(extra_env or {}),
    }
    for name in ("SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "APPROVERS"):
        env.pop(name, None)
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", env={**env, "PORT": str(port)}, cwd=ROOT
        )
        for port in ports
    ]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        async with aiohttp.ClientSession() as http:
            for url in urls:
                for _ in range(600):
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with http.get(f"{url}/healthz") as response:
                            if response.status == 200:
                                break
                    await asyncio.sleep(0.05)
                else:
                    pytest.fail(f"bot at {url} did not start")
        yield urls
    finally:
        for process in processes:
            if process.returncode is None:
                process.terminate()
        for process in processes:
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _post_all(
    http: aiohttp.ClientSession, requests: list[tuple[str, str, dict[str, str]]]
) -> list[int]:
    async def one(url: str, body: str, headers: dict[str, str]) -> int:
        async with http.post(f"{url}/slack/events", data=body, headers=headers) as response:
            return response.status

    return list(await asyncio.gather(*(one(*r) for r in requests)))


async def test_two_processes_handle_a_retried_event_and_a_double_click_once(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    executions = tmp_path / "executions.log"
    executions.touch()
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    base_redis = os.environ[REDIS_ENV]
    redis_url = f"{base_redis}{'&' if '?' in base_redis else '?'}key_prefix={prefix}"
    async with unique_url("postgres", tmp_path) as storage_url:
        async with open_storage(storage_url) as store:
            await store.get_value("warm-up")  # migrate once, before two processes race to
        try:
            async with (
                _instances(slack, storage_url, redis_url, executions) as urls,
                aiohttp.ClientSession() as http,
            ):
                await _scenario(slack, http, urls, executions, storage_url)
            redis = aioredis.Redis.from_url(base_redis)
            try:  # the marks are in Redis, not in the shared database
                assert await redis.exists(f"{prefix}mark:slack:event:EvMany1") == 1
            finally:
                await redis.aclose()
            async with open_storage(storage_url) as store:
                assert await store.get_value("slack:event:EvMany1") is None
        finally:
            await _drop_redis_prefix(base_redis, prefix)


async def _scenario(
    slack: FakeSlackAPI,
    http: aiohttp.ClientSession,
    urls: list[str],
    executions: Path,
    storage_url: str,
) -> None:
    ts = f"{int(time.time())}.000100"
    event = {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> delete record abc-123",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
        "event_ts": ts,
    }
    envelope = {"type": "event_callback", "team_id": TEAM, "event_id": "EvMany1", "event": event}
    first = event_request(envelope, SECRET)
    retry = event_request(envelope, SECRET, retry_num=1)
    statuses = await _post_all(
        http, [(urls[0], *first), (urls[1], *retry), (urls[1], *first), (urls[0], *retry)]
    )
    assert statuses == [200] * 4

    def cards() -> list[PostedMessage]:
        return [m for m in slack.thread(CHANNEL, ts) if m.blocks]

    await _eventually(lambda: len(cards()) >= 1, "the approval card")
    [card] = cards()

    click = click_payload(card, "approval:approve", user="U2", response_url=f"{urls[0]}/unused")
    request = interaction_request(click, SECRET)
    statuses = await _post_all(http, [(urls[0], *request), (urls[1], *request)] * 2)
    assert statuses == [200] * 4

    def answers() -> list[str]:
        return [m.text for m in slack.thread(CHANNEL, ts) if not m.blocks]

    await _eventually(
        lambda: answers() == ["Deleted."] and len(slack.calls_to("chat.postEphemeral")) == 3,
        "the answer and three 'already approved' notes",
    )
    async with open_storage(storage_url) as store:
        await _eventually_async(lambda: _executed(store), "the executed audit event")
    assert len((await asyncio.to_thread(executions.read_text)).splitlines()) == 1
    assert len([c for c in slack.calls_to("chat.update") if c.get("ts") == card.ts]) == 1
    assert len(cards()) == 1 and answers() == ["Deleted."]
    for ephemeral in slack.calls_to("chat.postEphemeral"):
        assert "already approved by <@U2>" in ephemeral["text"]


async def _executed(store: Any) -> bool:
    return any(e.kind == "executed" for e in await store.query_audit())


async def _eventually_async(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + 30
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _two_clients() -> AsyncIterator[tuple[aioredis.Redis, aioredis.Redis, str]]:
    """Two independent Redis clients (as two processes have) and a fresh key prefix."""
    base = os.environ[REDIS_ENV]
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    first, second = aioredis.Redis.from_url(base), aioredis.Redis.from_url(base)
    try:
        yield first, second, prefix
    finally:
        await first.aclose()
        await second.aclose()
        await _drop_redis_prefix(base, prefix)


async def test_a_thread_lock_is_held_by_one_instance_at_a_time() -> None:
    async with _two_clients() as (first, second, prefix):
        a = RedisThreadLocks(first, prefix=prefix, poll_seconds=0.01)
        b = RedisThreadLocks(second, prefix=prefix, poll_seconds=0.01)
        order: list[str] = []
        a_holds, b_waits = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with a.hold("slack:T1:C1:1.0"):
                order.append("a in")
                a_holds.set()
                await b_waits.wait()
                await asyncio.sleep(0.1)  # b polls meanwhile and must not get in
                order.append("a out")

        async def waiter() -> None:
            await a_holds.wait()
            b_waits.set()
            async with b.hold("slack:T1:C1:1.0"):
                order.append("b in")

        async def other_thread() -> None:
            await a_holds.wait()
            async with b.hold("slack:T1:C1:2.0"):
                order.append("other thread")

        await asyncio.gather(holder(), waiter(), other_thread())
        assert order.index("a out") < order.index("b in")
        assert order.index("other thread") < order.index("a out")
        assert await first.keys(f"{prefix}lock:*") == []


async def test_a_lock_is_released_only_by_its_owner_and_expires_after_a_crash() -> None:
    async with _two_clients() as (first, second, prefix):
        crashed = Lock(first, f"{prefix}lock:t", timeout=0.3, thread_local=False)
        assert await crashed.acquire()
        intruder = Lock(second, f"{prefix}lock:t", timeout=0.3, thread_local=False)
        with pytest.raises(LockError):
            await intruder.release()  # not its token
        assert await first.exists(f"{prefix}lock:t") == 1
        locks = RedisThreadLocks(second, prefix=prefix, poll_seconds=0.02)
        async with asyncio.timeout(5):
            async with locks.hold("t"):  # gets in once the crashed holder's lease ran out
                assert await crashed.owned() is False


async def test_a_thread_lock_lapses_within_one_claim_lease_of_a_crash() -> None:
    """The thread lock of an instance killed while answering lapses with its claims: after
    CLAIM_LEASE_SECONDS (here 2), not after a fixed minute (SPEC 3.4)."""
    base = os.environ[REDIS_ENV]
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    try:
        async with shared_coordination(f"{base}?key_prefix={prefix}", lease_seconds=2) as shared:
            assert shared.locks is not None
            async with shared.locks.hold("slack:T1:C1:9.0"):
                probe = aioredis.Redis.from_url(base)
                try:
                    ttl_ms = await probe.pttl(f"{prefix}lock:slack:T1:C1:9.0")
                finally:
                    await probe.aclose()
        assert 0 < ttl_ms <= 2000
    finally:
        await _drop_redis_prefix(base, prefix)


async def test_a_mark_is_first_for_exactly_one_instance() -> None:
    async with _two_clients() as (first, second, prefix):
        marks = [RedisMarks(first, prefix=prefix), RedisMarks(second, prefix=prefix)]
        results = await asyncio.gather(
            *(m.add_if_absent("slack:event:Ev1", "1", 60) for m in marks * 5)
        )
        assert sorted(results) == [False] * 9 + [True]
        assert 0 < await first.ttl(f"{prefix}mark:slack:event:Ev1") <= 60
