"""``python -m bot`` as a real process: JSON logs on every line, and draining on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from tests.bot.bot_process import free_port, serve_bot_process
from tests.bot.harness import CHANNEL, SECRET, TEAM, click_payload
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[3]


def _env(slack: FakeSlackAPI, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "STORAGE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
        "BOT_AGENT": "tests.bot.ops.process_agent:agent",
        "PYTHONPATH": str(ROOT),
        "HOST": "127.0.0.1",
        **extra,
    }
    for name in ("SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "REDIS_URL"):
        env.pop(name, None)
    return env


def _mention(ts: str, event_id: str) -> tuple[str, dict[str, str]]:
    event = {
        "type": "app_mention",
        "user": "U1",
        "text": "<@UBOT> delete record abc-123",
        "ts": ts,
        "channel": CHANNEL,
        "team": TEAM,
        "event_ts": ts,
    }
    envelope = {"type": "event_callback", "team_id": TEAM, "event_id": event_id, "event": event}
    return event_request(envelope, SECRET)


async def _eventually(check: Callable[[], bool], what: str) -> None:
    """Poll ``check``: the work happens in another process, there is nothing to await."""
    deadline = time.monotonic() + 30
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_json_logs_are_one_object_per_line_with_the_ids_of_the_run(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = _env(slack, tmp_path, LOG_FORMAT="json", LOG_LEVEL="INFO")
    async with serve_bot_process(env, ROOT) as bot:
        ts = f"{int(time.time())}.000100"
        body, headers = _mention(ts, "EvJ1")
        async with bot.http.post(f"{bot.url}/slack/events", data=body, headers=headers) as response:
            assert response.status == 200

        def cards() -> list[PostedMessage]:
            return [m for m in slack.thread(CHANNEL, ts) if m.blocks]

        await _eventually(lambda: len(cards()) == 1, "the approval card")
        click = click_payload(cards()[0], "approval:approve", user="U2")
        body, headers = interaction_request(click, SECRET)
        async with bot.http.post(f"{bot.url}/slack/events", data=body, headers=headers) as r:
            assert r.status == 200
        await _eventually(
            lambda: "Deleted." in [m.text for m in slack.thread(CHANNEL, ts)], "the answer"
        )
    assert bot.returncode == 0
    lines = [json.loads(line) for line in bot.stderr.splitlines() if line.strip()]
    assert lines and all({"level", "logger", "message", "time"} <= set(x) for x in lines)
    warned = [x for x in lines if "import-time warning" in x["message"]]
    assert warned and warned[0]["logger"] == "py.warnings" and warned[0]["level"] == "WARNING"
    [deleting] = [x for x in lines if x["message"] == "deleting a record"]
    assert deleting["logger"] == "tests.process_agent"
    assert deleting["thread_id"] and deleting["run_id"] and deleting["tool_call_id"]
    assert "xoxb-test" not in bot.stderr and SECRET not in bot.stderr


async def test_sigterm_refuses_new_events_lets_the_running_tool_finish_and_exits_0(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    env = _env(slack, tmp_path, TOOL_GATE_DIR=str(gate), LOG_LEVEL="WARNING", PORT="0")
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env={**env, "PORT": str(port)},
        cwd=ROOT,
        stderr=asyncio.subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            await _wait_serving(http, url)
            ts = f"{int(time.time())}.000200"
            body, headers = _mention(ts, "EvD1")
            async with http.post(f"{url}/slack/events", data=body, headers=headers) as r:
                assert r.status == 200

            def cards() -> list[PostedMessage]:
                return [m for m in slack.thread(CHANNEL, ts) if m.blocks]

            await _eventually(lambda: len(cards()) == 1, "the approval card")
            click = click_payload(cards()[0], "approval:approve", user="U2")
            body, headers = interaction_request(click, SECRET)
            async with http.post(f"{url}/slack/events", data=body, headers=headers) as r:
                assert r.status == 200
            await _eventually((gate / "started").exists, "the tool to start")

            process.send_signal(signal.SIGTERM)
            later = f"{int(time.time())}.000300"
            body, headers = _mention(later, "EvD2")
            await _eventually_refused(http, url, body, headers)
            assert process.returncode is None  # still draining: the tool holds it
            async with http.get(f"{url}/readyz") as r:  # the load balancer looks elsewhere
                assert r.status == 503
                assert "stopping" in (await r.json())["checks"]["draining"]
            (gate / "release").touch()
            code = await asyncio.wait_for(process.wait(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert code == 0
    assert "Deleted." in [m.text for m in slack.thread(CHANNEL, ts)]
    assert process.stderr is not None
    stderr = (await process.stderr.read()).decode()
    assert "Traceback" not in stderr, stderr


async def _wait_serving(http: aiohttp.ClientSession, url: str) -> None:
    for _ in range(600):
        try:
            async with http.get(f"{url}/healthz") as response:
                if response.status == 200:
                    return
        except aiohttp.ClientConnectionError:
            pass
        await asyncio.sleep(0.05)
    pytest.fail("python -m bot did not start")


async def _eventually_refused(
    http: aiohttp.ClientSession, url: str, body: str, headers: dict[str, str]
) -> None:
    """The signal is handled asynchronously: post until the process answers non-2xx."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            async with http.post(f"{url}/slack/events", data=body, headers=headers) as r:
                if r.status >= 300:
                    assert r.status == 503
                    return
        except aiohttp.ClientConnectionError:
            pytest.fail("the process stopped listening before its tool finished")
        await asyncio.sleep(0.05)
    pytest.fail("new events were still taken after SIGTERM")
