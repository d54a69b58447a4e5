"""SPEC 17 with the suite's own ``ops`` server (the reference servers cannot redefine a tool or
add one): a tool redefined under its card is presented again and the old card's approval runs
nothing; a server's ``list_changed`` reaches the gateway's clients; an upstream server that is
down is an ``isError`` result and the bot stays up."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp.types as mcp_types
import pytest
from mcp.client.session import IncomingMessage

from tests.bot.bot_process import free_port
from tests.bot.gateway.harness import (
    ALICE,
    GATEWAY_CHANNEL,
    OPS_SERVER,
    gateway_bot,
    gateway_env,
    mcp_session,
    ops_server,
    text_of,
)
from tests.fakes.slack_api import FakeSlackAPI
from tests.tools.conftest import calls

pytestmark = [pytest.mark.slow, pytest.mark.processes]


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


async def test_a_tool_redefined_under_its_card_is_presented_again_and_runs_only_as_shown(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    env = gateway_env(slack, tmp_path, ops_server(log), GATEWAY_HOLD_SECONDS="1")
    transfer = {"account": "A-1", "amount": 5}
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        assert (await client.call_tool("ops_transfer", transfer)).is_error  # held
        shown = await gateway.next_card()
        await client.call_tool("ops_redefine_transfer", {})  # held too: approve it
        await gateway.click(await gateway.next_card(2), "approval:approve", user="U0BOB")
        assert "redefined" in text_of(await client.call_tool("ops_redefine_transfer", {}))
        for _ in range(500):  # the server's list_changed is read, the tool listed again
            tools = gateway.services.agent.get("gateway")
            assert tools is not None
            if "x 1000" in tools.tools["ops_transfer"].description:
                break
            await asyncio.sleep(0.02)
        await gateway.click(shown, "approval:approve", user="U0BOB")  # what was shown changed
        assert calls(log) == []  # nothing ran
        assert "Replaced" in str(gateway.card(shown.ts).blocks)
        [again] = [m for m in slack.thread(GATEWAY_CHANNEL, shown.ts) if m.blocks]
        redefined = gateway.services.agent.get("gateway")
        assert redefined is not None
        digest = redefined.tools["ops_transfer"].definition_digest
        assert digest in str(again.blocks) and digest not in str(shown.blocks)  # new definition
        waiting = await client.call_tool("ops_transfer", transfer)  # still the same call
        assert waiting.is_error and "waiting" in text_of(waiting)
        await gateway.click(again, "approval:approve", user="U0BOB")
        done = await client.call_tool("ops_transfer", transfer)
        assert not done.is_error and text_of(done) == "moved 5000 from A-1"
    assert calls(log) == ["transfer A-1 5000"]  # once, as presented the second time


async def test_a_servers_list_changed_reaches_the_gateways_clients(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = gateway_env(slack, tmp_path, ops_server(tmp_path / "calls.log"))
    changed = asyncio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    async with (
        gateway_bot(slack, env) as gateway,
        mcp_session(gateway.url, ALICE, on_message=on_message) as client,
    ):
        init = await client.list_tools()
        assert "ops_shiny" not in {tool.name for tool in init.tools}
        adding = asyncio.create_task(client.call_tool("ops_add_tool", {"name": "shiny"}))
        await gateway.click(await gateway.next_card(), "approval:approve", user="U0BOB")
        assert not (await adding).is_error
        await changed.wait()  # passed on by the gateway
        listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "ops_shiny" in listed


async def test_an_upstream_server_that_is_down_is_an_error_result_and_the_bot_stays_up(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    kept_down = tmp_path / "ops-down"
    env = gateway_env(slack, tmp_path, ops_server(tmp_path / "calls.log", kept_down))
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        pid = int(text_of(await client.call_tool("ops_pid", {})))
        kept_down.touch()  # its restarts fail until this goes: the call cannot race a restart
        os.kill(pid, signal.SIGKILL)
        down = await client.call_tool("ops_read_ticket", {"ticket_id": "T-1"})
        assert down.is_error
        assert "running it failed" in text_of(down) and "ops" in text_of(down)
        kept_down.unlink()
        for _ in range(500):  # restarted in the background: a later call works
            again = await client.call_tool("ops_read_ticket", {"ticket_id": "T-1"})
            if not again.is_error:
                break
            await asyncio.sleep(0.05)
    assert not again.is_error and "open" in text_of(again)


async def test_an_approved_call_whose_server_was_down_is_asked_anew_not_replayed(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    log, port = tmp_path / "calls.log", free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        str(OPS_SERVER),
        "http",
        str(port),
        env={**os.environ, "OPS_CALL_LOG": str(log)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    policy = f'[[mcp_servers]]\nname = "ops"\nurl = "http://127.0.0.1:{port}/mcp"\n'
    env = gateway_env(slack, tmp_path, policy, GATEWAY_HOLD_SECONDS="1")
    delete = {"ticket_id": "T-4"}
    try:
        await _serving(port)
        async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
            assert (await client.call_tool("ops_delete_ticket", delete)).is_error  # held
            card = await gateway.next_card()
            server.kill()  # an HTTP server: nobody restarts it
            await server.wait()
            await gateway.click(card, "approval:approve", user="U0BOB")
            failed = await client.call_tool("ops_delete_ticket", delete)
            assert failed.is_error and "running it failed" in text_of(failed)
            again = await client.call_tool("ops_delete_ticket", delete)
            assert again.is_error and "waiting" in text_of(again)
            assert len(gateway.cards()) == 2  # a new call, on a new card
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    assert calls(log) == []


async def _serving(port: int) -> None:
    for _ in range(600):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return
