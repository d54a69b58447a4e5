"""A gateway restart loses nothing, and two gateways on one PostgreSQL run an approved call
once (SPEC 17), with ``python -m bot gateway`` as real processes and the official Python client.

- Restart: a held call survives the process being killed (``SIGKILL``); the client's identical
  retry on the restarted gateway waits on the same card (no second one), and once approved gets
  the result of the one run.
- Two instances: the call is held through one instance and approved through the other's API;
  the client's retries on both instances at once get the same result, and the upstream server
  ran it once (every instance starts its own ``ops`` server; they share one call log).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.backends import POSTGRES_ENV, unique_url
from tests.bot.bot_process import free_port
from tests.bot.gateway.harness import (
    ALICE,
    BOB,
    GATEWAY_CHANNEL,
    gateway_env,
    mcp_session,
    ops_server,
    text_of,
)
from tests.bot.harness import SECRET, click_payload
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import interaction_request
from tests.tools.conftest import calls

pytestmark = [pytest.mark.slow, pytest.mark.processes]

START_SECONDS = 120.0
"""How long a gateway process may take to serve (importing everything on a busy machine)."""


@dataclass
class Process:
    url: str
    process: asyncio.subprocess.Process


@asynccontextmanager
async def gateway_process(env: dict[str, str], cwd: Path) -> AsyncIterator[Process]:
    """``python -m bot gateway`` on a free port, serving; stopped (SIGTERM) on exit."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "gateway",
        env={**os.environ, **env, "PORT": str(port)},
        cwd=cwd,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx2.AsyncClient() as http:
            for _ in range(int(START_SECONDS / 0.1)):
                with contextlib.suppress(httpx2.HTTPError):
                    if (await http.get(f"{url}/healthz")).status_code == 200:
                        break
                assert process.returncode is None, "python -m bot gateway exited"
                await asyncio.sleep(0.1)
        yield Process(url=url, process=process)
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


async def _click(url: str, card: PostedMessage, user: str) -> None:
    body, headers = interaction_request(click_payload(card, "approval:approve", user=user), SECRET)
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"{url}/slack/events", content=body, headers=headers)
    assert answer.status_code == 200


def _cards(slack: FakeSlackAPI) -> list[PostedMessage]:
    return [
        m
        for m in slack.messages.values()
        if m.channel == GATEWAY_CHANNEL and m.thread_ts is None and m.metadata
    ]


async def _until_approved(slack: FakeSlackAPI, ts: str) -> None:
    for _ in range(600):
        if "Approved" in slack.messages[ts].text:
            return
        await asyncio.sleep(0.05)


async def test_a_held_call_survives_a_killed_gateway_and_the_retry_gets_its_outcome(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    env = gateway_env(slack, tmp_path, ops_server(log), GATEWAY_HOLD_SECONDS="1")
    env["STORAGE_URL"] = f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"
    transfer = {"account": "A-9", "amount": 3}
    async with gateway_process(env, tmp_path) as first:
        async with mcp_session(first.url, ALICE) as client:
            held = await client.call_tool("ops_transfer", transfer)
        assert held.is_error and "waiting" in text_of(held)
        first.process.kill()  # no drain, no goodbye
        await first.process.wait()
    [card] = _cards(slack)
    async with (
        gateway_process(env, tmp_path) as second,
        mcp_session(second.url, ALICE) as client,
    ):
        again = await client.call_tool("ops_transfer", transfer)
        assert again.is_error and "waiting" in text_of(again)
        assert len(_cards(slack)) == 1  # the same pending call, the same card
        await _click(second.url, card, "U0BOB")
        await _until_approved(slack, card.ts)
        done = await client.call_tool("ops_transfer", transfer)
    assert not done.is_error and text_of(done) == "moved 3 from A-9"
    assert calls(log) == ["transfer A-9 3"]


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}")
async def test_two_gateways_on_one_postgresql_run_an_approved_call_once(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    env = gateway_env(slack, tmp_path, ops_server(log), GATEWAY_HOLD_SECONDS="1")
    transfer = {"account": "A-2", "amount": 8}
    async with unique_url("postgres", tmp_path) as url:
        env["STORAGE_URL"] = url
        async with gateway_process(env, tmp_path) as one, gateway_process(env, tmp_path) as two:
            async with mcp_session(one.url, ALICE) as client:
                held = await client.call_tool("ops_transfer", transfer)
            assert held.is_error
            async with httpx2.AsyncClient() as http:
                listed = await http.get(
                    f"{two.url}/api/agents/gateway/suspended-runs",
                    headers={"Authorization": f"Bearer {BOB}"},
                )
                [run] = listed.json()["runs"]
                ids = {"runId": run["runId"], "toolCallId": run["toolCalls"][0]["toolCallId"]}
                approved = await http.post(
                    f"{two.url}/api/agents/gateway/approve-tool-call?wait=true",
                    json=ids,
                    headers={"Authorization": f"Bearer {BOB}"},
                )
            assert approved.status_code == 200, approved.text

            async def retry(url: str) -> str:
                async with mcp_session(url, ALICE) as session:
                    result = await session.call_tool("ops_transfer", transfer)
                assert not result.is_error, text_of(result)
                return text_of(result)

            answers = await asyncio.gather(retry(one.url), retry(two.url), retry(one.url))
    assert answers == ["moved 8 from A-2"] * 3
    assert calls(log) == ["transfer A-2 8"]  # one run, on the instance that took the decision
    assert len(_cards(slack)) == 1
