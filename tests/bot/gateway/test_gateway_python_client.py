"""SPEC 17 with the official Python ``mcp`` client in front of the reference servers
(``server-everything`` and ``server-filesystem`` over stdio): what is not held runs at once and
returns the server's own result; a held call is a card in ``GATEWAY_CHANNEL`` requested by the
token's person, approved in time, or after the hold and returned to the identical retry (the
server ran it once), declined (who, why) or expired; no token or a wrong one is 401."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx2
import pytest

from bot.background._periodic import sweep
from storage import utcnow
from tests.bot.gateway.harness import (
    ALICE,
    SERVICE,
    gateway_bot,
    gateway_env,
    mcp_session,
    reference_servers,
    text_of,
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


async def test_tools_are_listed_as_the_servers_give_them_and_read_only_runs_at_once(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        echo = listed["everything_echo"]
        assert echo.annotations is not None and echo.annotations.read_only_hint is True
        assert echo.input_schema["properties"]["message"]["type"] == "string"
        assert "files_move_file" in listed and "files_read_text_file" in listed
        result = await client.call_tool("everything_echo", {"message": "hi"})
        assert not result.is_error and text_of(result) == "Echo: hi"
        read = await client.call_tool("files_read_text_file", {"path": str(files / "a.txt")})
        assert text_of(read) == "alpha"
    assert gateway.cards() == []  # nothing was held


async def test_a_destructive_call_is_held_on_a_card_and_approved_in_time(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    move = {"source": str(files / "a.txt"), "destination": str(files / "b.txt")}
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        call = asyncio.create_task(client.call_tool("files_move_file", move))
        card = await gateway.next_card()
        shown = str(card.blocks)
        assert "files · move_file" in shown and "<@U0ALICE>" in shown  # the token's person
        assert "MCP server `files`" in shown and "countersign gateway" in shown
        assert not call.done() and (files / "a.txt").exists()  # nothing ran yet
        await gateway.click(card, "approval:approve", user="U0BOB")
        result = await call
        assert not result.is_error, text_of(result)
        assert "Successfully moved" in text_of(result)
        assert "Approved" in gateway.card(card.ts).text
    assert (files / "b.txt").read_text() == "alpha" and not (files / "a.txt").exists()


async def test_approved_after_the_hold_the_identical_retry_gets_the_result_of_one_run(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files), GATEWAY_HOLD_SECONDS="1")
    move = {"source": str(files / "a.txt"), "destination": str(files / "b.txt")}
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        waiting = await client.call_tool("files_move_file", move)
        assert waiting.is_error
        card = (await gateway.next_card()).ts
        assert "waiting for a person to approve it" in text_of(waiting)
        assert f"/archives/CGATE/p{card.replace('.', '')}" in text_of(waiting)  # where
        assert "again with the same arguments" in text_of(waiting)
        again = await client.call_tool("files_move_file", move)  # identical: the same card
        assert again.is_error and len(gateway.cards()) == 1
        await gateway.click(gateway.card(card), "approval:approve", user="U0BOB")
        result = await client.call_tool("files_move_file", move)
        assert not result.is_error and "Successfully moved" in text_of(result)
        later = await client.call_tool("files_move_file", move)  # until its TTL: same result
        assert text_of(later) == text_of(result)
        other = await client.call_tool("files_move_file", {**move, "destination": "/x"})
        assert other.is_error and len(gateway.cards()) == 2  # other arguments: a new call
    # the server ran it once: a second run would have failed (a.txt is gone)
    assert (files / "b.txt").read_text() == "alpha" and not (files / "a.txt").exists()


async def test_declined_says_who_and_why_and_nothing_runs(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    move = {"source": str(files / "a.txt"), "destination": str(files / "b.txt")}
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        call = asyncio.create_task(client.call_tool("files_move_file", move))
        card = await gateway.next_card()
        await gateway.decline(card, user="U0BOB", reason="keep a.txt where it is")
        result = await call
    assert result.is_error
    assert text_of(result) == (
        "Declined by U0BOB because: keep a.txt where it is: the call was not run."
    )
    assert (files / "a.txt").exists() and not (files / "b.txt").exists()


async def test_expired_says_so_and_nothing_runs(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    move = {"source": str(files / "a.txt"), "destination": str(files / "b.txt")}
    async with gateway_bot(slack, env) as gateway, mcp_session(gateway.url, ALICE) as client:
        call = asyncio.create_task(client.call_tool("files_move_file", move))
        card = await gateway.next_card()
        swept = await sweep(gateway.services, now=utcnow() + timedelta(days=2))  # past its TTL
        assert swept.expired == 1
        result = await call
        assert "Expired" in gateway.card(card.ts).text
        assert card.metadata is not None
        run_id = card.metadata["event_payload"]["run_id"]
        audit = await gateway.services.storage.query_audit(run_id=run_id)
    kinds = [event.kind for event in audit]
    assert "approval-requested" in kinds and "presented" in kinds and "expired" in kinds
    assert {event.agent_id for event in audit} == {"gateway"}  # every record says whose
    assert result.is_error and "expired before anyone decided it" in text_of(result)
    assert (files / "a.txt").exists()


async def test_no_token_a_wrong_one_and_the_service_token_are_refused(
    slack: FakeSlackAPI, tmp_path: Path, files: Path
) -> None:
    env = gateway_env(slack, tmp_path, reference_servers(files))
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    async with gateway_bot(slack, env) as gateway:
        for token, status in ((None, 401), ("not-a-token", 401), (SERVICE, 403), (ALICE, 200)):
            auth = {"Authorization": f"Bearer {token}"} if token else {}
            async with httpx2.AsyncClient() as http:
                answer = await http.post(
                    f"{gateway.url}/mcp", json=initialize, headers={**accept, **auth}
                )
            assert answer.status_code == status, (token, answer.text)
            if status == 401:
                assert answer.headers["WWW-Authenticate"].startswith("Bearer")
            if status != 200:  # the official client gets nowhere either
                with pytest.raises(BaseException):  # noqa: B017 (an MCPError in a TaskGroup)
                    async with mcp_session(gateway.url, token) as client:
                        await client.call_tool(
                            "files_move_file", {"source": "a", "destination": "b"}
                        )
    assert gateway.cards() == []  # nothing was proposed
