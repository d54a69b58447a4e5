"""``python -m bot gateway --stdio`` (SPEC 17): a thin relay for clients that start a command,
driven by the official Python client over stdio: the bot's tools, a read-only call at once, a
held call's card posted by the bot (requested by ``COUNTERSIGN_TOKEN``'s person); a refused
token ends the relay with a sentence, not a hung client."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.bot.gateway.harness import (
    ALICE,
    gateway_bot,
    gateway_env,
    ops_server,
    text_of,
)
from tests.fakes.slack_api import FakeSlackAPI

pytestmark = [pytest.mark.slow, pytest.mark.processes]


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


def _relay(url: str, token: str) -> StdioServerParameters:
    env = {**os.environ, "COUNTERSIGN_URL": url, "COUNTERSIGN_TOKEN": token}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "bot", "gateway", "--stdio"], env=env
    )


async def test_the_stdio_relay_serves_the_bots_tools_and_its_cards(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = gateway_env(slack, tmp_path, ops_server(tmp_path / "calls.log"), GATEWAY_HOLD_SECONDS="1")
    async with (
        gateway_bot(slack, env) as gateway,
        stdio_client(_relay(gateway.url, ALICE)) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"ops_read_ticket", "ops_delete_ticket"} <= names
        read_ = await client.call_tool("ops_read_ticket", {"ticket_id": "T-1"})
        assert not read_.is_error and '"open"' in text_of(read_)
        held = await client.call_tool("ops_delete_ticket", {"ticket_id": "T-1"})
        assert held.is_error and "waiting for a person" in text_of(held)
        card = await gateway.next_card()
        assert "<@U0ALICE>" in str(card.blocks)


async def test_a_refused_token_ends_the_relay_saying_so(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = gateway_env(slack, tmp_path, ops_server(tmp_path / "calls.log"))
    async with gateway_bot(slack, env) as gateway:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "gateway",
            "--stdio",
            env={**os.environ, "COUNTERSIGN_URL": gateway.url, "COUNTERSIGN_TOKEN": "wrong"},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await process.communicate(b"")
    assert process.returncode == 2
    assert "refused COUNTERSIGN_TOKEN (401)" in err.decode()
