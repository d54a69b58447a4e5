"""Three ``python -m bot`` processes on one PostgreSQL and one Redis (SPEC 13, many instances):
events and clicks spread over them, one is SIGKILLed mid-tool, one is SIGTERMed mid-tool.
Every event gets one card, every approved tool runs once or is reported interrupted, and no card
keeps live buttons for a decided call. Skipped unless ``TEST_POSTGRES_URL`` and
``TEST_REDIS_URL`` are set (``.ci/run`` sets them)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest

from tests.backends import POSTGRES_ENV, REDIS_ENV, _drop_redis_prefix, open_storage, unique_url
from tests.bot.bot_process import free_port
from tests.bot.harness import CHANNEL, SECRET, TEAM, click_payload
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request

pytestmark = [
    pytest.mark.processes,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (os.environ.get(POSTGRES_ENV) and os.environ.get(REDIS_ENV)),
        reason=f"set {POSTGRES_ENV} and {REDIS_ENV} (.ci/run does)",
    ),
]
ROOT = Path(__file__).resolve().parents[3]
LEASE_SECONDS = 2
Instance = tuple[str, asyncio.subprocess.Process]
"""A bot process's base URL and the process."""


async def _eventually(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll ``check``: other processes do the work, there is nothing to await."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def _fleet(
    env: dict[str, str], count: int
) -> AsyncIterator[list[tuple[str, asyncio.subprocess.Process]]]:
    ports = [free_port() for _ in range(count)]
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", env={**env, "PORT": str(port)}, cwd=ROOT
        )
        for port in ports
    ]
    fleet = [(f"http://127.0.0.1:{port}", p) for port, p in zip(ports, processes, strict=True)]
    try:
        async with aiohttp.ClientSession() as http:
            deadline = time.monotonic() + 180  # a loaded machine starts Python slowly
            for url, _ in fleet:
                while True:
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with http.get(f"{url}/healthz") as response:
                            if response.status == 200:
                                break
                    if time.monotonic() > deadline:
                        pytest.fail(f"bot at {url} did not start")
                    await asyncio.sleep(0.05)
        yield fleet
    finally:
        for _, process in fleet:
            if process.returncode is None:
                process.terminate()
        for _, process in fleet:
            try:
                await asyncio.wait_for(process.wait(), 40)
            except TimeoutError:
                process.kill()
                await process.wait()


def _mention(ts: str, record: str) -> tuple[str, dict[str, str]]:
    event = {
        "type": "app_mention",
        "user": "U1",
        "text": f"<@UBOT> delete record {record}",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
        "event_ts": ts,
    }
    envelope = {
        "type": "event_callback",
        "team_id": TEAM,
        "event_id": f"Ev{record}{ts}",
        "event": event,
    }
    return event_request(envelope, SECRET)


async def test_three_instances_lose_nothing_when_one_is_killed_and_one_drains(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    gate, executions = tmp_path / "gate", tmp_path / "executions.log"
    gate.mkdir()
    executions.touch()
    (gate / "hold-r1").touch()
    (gate / "hold-r2").touch()
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    base_redis = os.environ[REDIS_ENV]
    redis_url = f"{base_redis}{'&' if '?' in base_redis else '?'}key_prefix={prefix}"
    async with unique_url("postgres", tmp_path) as storage_url:
        async with open_storage(storage_url) as store:
            await store.get_value("warm-up")  # migrate once, before three processes race to
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.base_url,
            "STORAGE_URL": storage_url,
            "REDIS_URL": redis_url,
            "BOT_AGENT": "tests.bot.ops.fleet_agent:agent",
            "GATE_DIR": str(gate),
            "EXECUTIONS_FILE": str(executions),
            "CLAIM_LEASE_SECONDS": str(LEASE_SECONDS),
            "PYTHONPATH": str(ROOT),
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
        }
        for name in ("SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "APPROVERS"):
            env.pop(name, None)
        try:
            async with _fleet(env, 3) as fleet, aiohttp.ClientSession() as http:
                await _scenario(slack, http, fleet, gate, executions)
        finally:
            await _drop_redis_prefix(base_redis, prefix)


async def _scenario(
    slack: FakeSlackAPI,
    http: aiohttp.ClientSession,
    fleet: list[Instance],
    gate: Path,
    executions: Path,
) -> None:
    (a, proc_a), (b, proc_b), (c, _) = fleet
    now = int(time.time())
    threads = {record: f"{now}.{i:06d}" for i, record in enumerate(("r1", "r2", "r3"), 1)}

    async def post(url: str, request: tuple[str, dict[str, str]]) -> int:
        async with http.post(f"{url}/slack/events", data=request[0], headers=request[1]) as r:
            return r.status

    def cards(record: str) -> list[PostedMessage]:
        return [m for m in slack.thread(CHANNEL, threads[record]) if m.blocks]

    def answers(record: str) -> list[str]:
        return [m.text for m in slack.thread(CHANNEL, threads[record]) if not m.blocks]

    async def approve(url: str, record: str) -> None:
        await _eventually(lambda: len(cards(record)) >= 1, f"the card of {record}")
        click = click_payload(cards(record)[0], "approval:approve", user="U2")
        assert await post(url, interaction_request(click, SECRET)) == 200

    # Events spread, each delivered twice to two instances (Slack's retry): one card each.
    for record, first, second in (("r1", a, b), ("r2", c, a), ("r3", b, c)):
        request = _mention(threads[record], record)
        assert await asyncio.gather(post(first, request), post(second, request)) == [200, 200]
    await approve(a, "r1")
    await approve(b, "r2")
    await approve(c, "r3")
    await _eventually(lambda: (gate / "started-r1").exists(), "r1's tool on A")
    await _eventually(lambda: (gate / "started-r2").exists(), "r2's tool on B")

    proc_a.send_signal(signal.SIGKILL)  # mid-tool: r1 must be reported interrupted
    proc_b.send_signal(signal.SIGTERM)  # mid-tool: r2 finishes and is answered
    late = f"{now}.000009"

    async def refused() -> bool:
        with contextlib.suppress(aiohttp.ClientConnectionError):
            return await post(b, _mention(late, "r9")) == 503
        return False

    deadline = time.monotonic() + 10
    while not await refused():
        assert time.monotonic() < deadline, "B kept taking events after SIGTERM"
    (gate / "release-r2").touch()
    assert await asyncio.wait_for(proc_b.wait(), 40) == 0
    await proc_a.wait()

    await _eventually(lambda: answers("r3") == ["Deleted r3."], "r3's answer")
    await _eventually(lambda: answers("r2") == ["Deleted r2."], "r2's answer")
    await _eventually(lambda: answers("r1") == ["Not done: interrupted."], "r1's recovery", 120)
    assert sorted((await asyncio.to_thread(executions.read_text)).split()) == ["r2", "r3"]
    for record in ("r1", "r2", "r3"):
        [card] = cards(record)
        assert not any(block["type"] == "actions" for block in card.blocks), record
