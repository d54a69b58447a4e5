"""SPEC 17 with the official TypeScript SDK's client (``@modelcontextprotocol/sdk`` from npm,
with its default timeouts: it gives up on a request after 60 s, so the gateway's hold ends
before) in front of ``server-everything`` over stdio and over Streamable HTTP, and of the
filesystem server: read-only at once; destructive held, then returned on retry after an
approval (the server ran it once); declined; no token and a wrong one refused."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from tests.bot.gateway.harness import (
    ALICE,
    NODE_MODULES,
    gateway_bot,
    gateway_env,
    node,
    reference_servers,
    ts_client,
)
from tests.fakes.slack_api import FakeSlackAPI

pytestmark = [pytest.mark.slow, pytest.mark.processes]


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


@pytest.fixture
def files(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha", encoding="utf-8")
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def everything_over_http() -> AsyncIterator[str]:
    """``server-everything`` serving Streamable HTTP on a free loopback port; its URL."""
    port = _free_port()
    process = await asyncio.create_subprocess_exec(
        node(),
        str(NODE_MODULES / "server-everything" / "dist" / "index.js"),
        "streamableHttp",
        env={**os.environ, "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with httpx2.AsyncClient() as http:
            for _ in range(600):
                with contextlib.suppress(httpx2.HTTPError):
                    await http.get(url)
                    break
                await asyncio.sleep(0.05)
        yield url
    finally:
        process.terminate()
        await process.wait()


def _text(answer: dict[str, object]) -> str:
    result = answer["result"]
    assert isinstance(result, dict)
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def test_listed_and_read_only_at_once_over_stdio_and_over_http(
    slack: FakeSlackAPI, tmp_path: Path, files: Path, everything_over_http: str
) -> None:
    policy = reference_servers(files) + (
        f'[[mcp_servers]]\nname = "web"\nurl = "{everything_over_http}"\n\n'
    )
    env = gateway_env(slack, tmp_path, policy)
    async with gateway_bot(slack, env) as gateway:
        listed = await ts_client(gateway.url, ALICE, "list")
        assert listed["ok"], listed
        names = {tool["name"]: tool for tool in listed["result"]["tools"]}  # type: ignore[index]
        assert names["web_echo"]["annotations"]["readOnlyHint"] is True
        assert "everything_echo" in names and "files_move_file" in names
        for tool in ("everything_echo", "web_echo"):  # stdio, then HTTP upstream
            answer = await ts_client(gateway.url, ALICE, "call", tool, '{"message": "hi"}')
            assert answer["ok"] and _text(answer) == "Echo: hi", answer
    assert gateway.cards() == []


async def test_held_then_approved_and_returned_on_retry_the_server_ran_it_once(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files), GATEWAY_HOLD_SECONDS="1")
    move = json.dumps({"source": str(files / "a.txt"), "destination": str(files / "b.txt")})
    async with gateway_bot(slack, env) as gateway:
        waiting = await ts_client(gateway.url, ALICE, "call", "files_move_file", move)
        assert waiting["ok"] and waiting["result"]["isError"] is True  # type: ignore[index]
        assert "waiting for a person to approve it" in _text(waiting)
        card = await gateway.next_card()
        assert "from ts-sdk-client through the countersign gateway" in str(card.blocks)
        await gateway.click(card, "approval:approve", user="U0BOB")
        done = await ts_client(gateway.url, ALICE, "call", "files_move_file", move)
        assert done["ok"] and not done["result"].get("isError"), done  # type: ignore[union-attr]
        assert "Successfully moved" in _text(done)
        assert len(gateway.cards()) == 1
    assert (files / "b.txt").read_text() == "alpha" and not (files / "a.txt").exists()


async def test_declined_is_an_error_result_naming_who_and_why(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files), GATEWAY_HOLD_SECONDS="1")
    move = json.dumps({"source": str(files / "a.txt"), "destination": str(files / "b.txt")})
    async with gateway_bot(slack, env) as gateway:
        await ts_client(gateway.url, ALICE, "call", "files_move_file", move)
        card = await gateway.next_card()
        await gateway.decline(card, user="U0CAROL", reason="not today")
        answer = await ts_client(gateway.url, ALICE, "call", "files_move_file", move)
    assert answer["result"]["isError"] is True  # type: ignore[index]
    assert _text(answer) == "Declined by U0CAROL because: not today: the call was not run."
    assert (files / "a.txt").exists()


async def test_no_token_and_a_wrong_token_get_401(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    async with gateway_bot(slack, env) as gateway:
        for token in (None, "wrong-token"):
            answer = await ts_client(gateway.url, token, "list")
            assert not answer["ok"] and answer["status"] == 401, answer
