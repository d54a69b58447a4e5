"""``[[mcp_servers]]`` started with the bot (SPEC 14): tools join the served agent, ``${VAR}``
from the environment through ``Settings``, one line for a server that cannot start, a dead
server restarted and reported once, tool lists refreshed when the server says they changed."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from pydantic import BaseModel

from agents import Agent, ServedParts
from agents.models import ScriptedModel
from bot import Settings, load_settings
from bot._mcp_servers import MCPTools, mcp_servers
from storage import InMemoryStorage
from tests.tools.conftest import OPS, calls
from tools import ToolContext, create_tool

pytestmark = pytest.mark.processes


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


def settings_with(tmp_path: Path, servers: str, **environ: str) -> Settings:
    path = tmp_path / "countersign.toml"
    path.write_text(servers, encoding="utf-8")
    base = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "s", "POLICY_FILE": str(path)}
    return load_settings({**base, **environ})


def ops_entry(name: str = "ops", *, command: str | None = None) -> str:
    argv = command or f'["{sys.executable}", "{OPS}"]'
    return (
        f'[[mcp_servers]]\nname = "{name}"\ncommand = {argv}\n'
        'env = { OPS_CALL_LOG = "${OPS_LOG}", OPS_GREETING = "hello ${WHO}" }\n'
    )


@asynccontextmanager
async def _served(
    settings: Settings, given: Agent | None = None
) -> AsyncIterator[tuple[Agent, MCPTools]]:
    """The servers running, and ``given`` served with their tools."""
    agent = given or Agent(id="ops", model=ScriptedModel([]), storage=InMemoryStorage())
    entries = settings.policy.mcp_servers
    async with mcp_servers(entries, settings.mcp_environ, taken=agent.tools) as mcp:
        yield agent.served(ServedParts(tools=mcp.tools)), mcp


async def _eventually(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(15):
        while not check():  # noqa: ASYNC110 - another process (the MCP server) changes it
            await asyncio.sleep(0.05)


async def test_policy_servers_start_and_their_tools_join_the_agent_with_env_from_settings(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.log"
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(log), WHO="ops team", OTHER="x")
    assert settings.mcp_environ == {"OPS_LOG": str(log), "WHO": "ops team"}
    assert "ops team" not in repr(settings)
    async with _served(settings) as (agent, _):
        tools = agent.tools
        assert {"ops_read_ticket", "ops_delete_ticket", "ops_greeting"} <= set(tools)
        assert tools["ops_delete_ticket"].require_approval is True
        assert tools["ops_read_ticket"].require_approval is False
        assert (await tools["ops_greeting"].run({}, _ctx()))["result"] == "hello ops team"
        await tools["ops_read_ticket"].run({"ticket_id": "T-1"}, _ctx())
    assert calls(log) == ["read_ticket T-1"]


async def test_a_server_that_cannot_start_is_one_warning_line_and_the_others_serve(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    broken = ops_entry("broken", command='["/nonexistent/mcp-server", "stdio"]')
    settings = settings_with(tmp_path, broken + ops_entry(), OPS_LOG=str(tmp_path / "l"), WHO="x")
    async with _served(settings) as (agent, _):
        assert any(name.startswith("ops_") for name in agent.tools)
        assert not any(name.startswith("broken_") for name in agent.tools)
        await asyncio.sleep(1.5)  # background retries stay quiet
    about = [r for r in caplog.records if "broken" in r.getMessage()]
    assert len(about) == 1, [r.getMessage() for r in about]
    assert about[0].levelno == logging.WARNING and about[0].exc_info is None
    assert "could not be started" in about[0].getMessage()
    assert "\n" not in about[0].getMessage()


async def test_a_missing_variable_is_one_line_and_the_bot_serves_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(tmp_path / "l"))  # no WHO
    async with _served(settings) as (agent, mcp):
        assert mcp.servers == [] and agent.tools == {}
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "ops" in line and "WHO" in line


async def test_a_server_that_dies_is_restarted_with_its_tools_and_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(tmp_path / "l"), WHO="x")
    async with _served(settings) as (agent, _):
        first = (await agent.tools["ops_pid"].run({}, _ctx()))["result"]
        os.kill(first, signal.SIGKILL)
        await _eventually(lambda: "reconnected" in caplog.text)  # restarted without a call
        second = (await agent.tools["ops_pid"].run({}, _ctx()))["result"]
        assert second != first
    down = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(down) == 1 and "ops" in down[0].getMessage(), [r.getMessage() for r in down]


async def test_the_agents_tools_are_refreshed_when_the_server_says_they_changed(
    tmp_path: Path,
) -> None:
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(tmp_path / "l"), WHO="x")
    async with _served(settings) as (agent, _):
        assert "ops_fresh" not in agent.tools
        await agent.tools["ops_add_tool"].run({"name": "fresh"}, _ctx())
        await _eventually(lambda: "ops_fresh" in agent.tools)
        assert (await agent.tools["ops_fresh"].run({}, _ctx()))["result"] == "added"
        assert "ops_read_ticket" in agent.tools


async def test_a_call_that_never_answers_times_out_and_the_run_goes_on(tmp_path: Path) -> None:
    """The server's ``timeout_seconds`` wins over MCP_CALL_TIMEOUT_SECONDS; the model is told
    the call timed out and answers, and the thread is free for the next message."""
    from agents.models import call, reply
    from bot._mcp_servers import CallLimits

    entry = ops_entry() + "timeout_seconds = 0.5\n"
    settings = settings_with(
        tmp_path, entry, OPS_LOG=str(tmp_path / "c.log"), WHO="x", MCP_CALL_TIMEOUT_SECONDS="600"
    )
    assert settings.mcp_call_timeout_seconds == 600
    model = ScriptedModel([call("ops_hang", {}), reply("It timed out."), reply("Hello again.")])
    given = Agent(id="ops", model=model, storage=InMemoryStorage())
    limits = CallLimits(timeout_seconds=600, output_max_bytes=settings.tool_output_max_bytes)
    async with mcp_servers(settings.policy.mcp_servers, settings.mcp_environ, limits) as mcp:
        agent = given.served(ServedParts(tools=mcp.tools))
        first = await agent.generate("hang please", thread_id="t1", resource_id="u1")
        second = await agent.generate("hi", thread_id="t1", resource_id="u1")
    assert (first.text, second.text) == ("It timed out.", "Hello again.")
    told = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert told and "no answer within 0.5 s" in str(told[-1])


def test_mcp_limits_are_settings_and_a_bad_value_is_reported(tmp_path: Path) -> None:
    from bot import BotConfigError

    with pytest.raises(BotConfigError) as raised:
        load_settings({"MCP_CALL_TIMEOUT_SECONDS": "0", "TOOL_OUTPUT_MAX_BYTES": "ten"})
    assert {p.split(" ")[0] for p in raised.value.problems} >= {
        "MCP_CALL_TIMEOUT_SECONDS",
        "TOOL_OUTPUT_MAX_BYTES",
    }
    entry = ops_entry() + "timeout_seconds = -1\n"
    with pytest.raises(BotConfigError):
        settings_with(tmp_path, entry, OPS_LOG="x", WHO="x")


async def test_a_server_tool_named_like_one_of_the_agents_is_refused_in_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(tmp_path / "l"), WHO="x")

    async def mine(input: Ticket, ctx: ToolContext) -> str:
        return "mine"

    own = create_tool(id="ops_read_ticket", description="d", input_schema=Ticket, execute=mine)
    given = Agent(id="ops", model=ScriptedModel([]), tools=[own], storage=InMemoryStorage())
    async with _served(settings, given) as (agent, mcp):
        assert agent.tools == {"ops_read_ticket": own}  # none of the server's tools joined
        assert mcp.tools.current_tools() == {}
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "were not added" in line and "ops_read_ticket" in line


class Ticket(BaseModel):
    ticket_id: str
