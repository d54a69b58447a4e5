"""``tools.mcp`` over streamable HTTP, across server restarts, and inside an agent run."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from agents import Agent
from agents.models import ScriptedModel, call, reply
from tests.tools.conftest import OPS, HttpServer, calls
from tools import ToolContext
from tools.mcp import MCPServer, MCPServerUnavailable

pytestmark = pytest.mark.processes


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


async def test_http_lists_and_calls_tools_with_expanded_headers(
    http_server: HttpServer, call_log: Path
) -> None:
    server = MCPServer.http(
        "ops", http_server.url, headers={"X-Token": "${TOKEN}"}, environ={"TOKEN": "t"}
    )
    async with server:
        tools = {tool.id: tool for tool in await server.list_tools()}
        assert tools["ops_read_ticket"].require_approval is False
        assert tools["ops_delete_ticket"].require_approval is True
        assert await tools["ops_delete_ticket"].run({"ticket_id": "T-9"}, _ctx()) == {
            "result": "deleted T-9"
        }
    assert calls(call_log) == ["delete_ticket T-9"]


async def test_http_server_down_is_a_tool_error_and_a_restart_reconnects(
    http_server: HttpServer,
) -> None:
    async with MCPServer.http("ops", http_server.url) as server:
        tools = {tool.id: tool for tool in await server.list_tools()}
        pid = tools["ops_pid"]
        first = await pid.run({}, _ctx())
        http_server.stop()
        with pytest.raises(MCPServerUnavailable, match="'ops'"):
            await pid.run({}, _ctx())
        http_server.start()
        for _ in range(40):
            try:
                second = await pid.run({}, _ctx())
                break
            except MCPServerUnavailable:
                await asyncio.sleep(0.25)
        else:
            pytest.fail("the tool never reconnected")
        assert second != first


async def test_a_stdio_server_killed_mid_session_is_restarted_on_the_next_call() -> None:
    async with MCPServer.stdio("ops", [sys.executable, OPS]) as server:
        tools = {tool.id: tool for tool in await server.list_tools()}
        pid = tools["ops_pid"]
        first = (await pid.run({}, _ctx()))["result"]
        os.kill(first, signal.SIGKILL)
        await asyncio.sleep(0.5)
        second = (await pid.run({}, _ctx()))["result"]
        assert second != first
        again = {tool.id: tool.parameters_schema() for tool in await server.list_tools()}
        assert again == {tool.id: tool.parameters_schema() for tool in tools.values()}


async def test_a_destructive_mcp_tool_waits_for_approval_and_runs_once(call_log: Path) -> None:
    server = MCPServer.stdio(
        "ops", [sys.executable, OPS], env={"OPS_CALL_LOG": str(call_log)}, environ={}
    )
    async with server:
        model = ScriptedModel(
            [call("ops_delete_ticket", {"ticket_id": "T-7"}), reply("Deleted T-7.")]
        )
        agent = Agent(
            id="ops-agent",
            name="Ops",
            instructions="Run ops tools.",
            model=model,
            tools=await server.list_tools(),
        )
        paused = await agent.generate("Delete ticket T-7")
        assert paused.finish_reason == "suspended"
        assert calls(call_log) == []
        done = await agent.approve_tool_call_generate(
            run_id=paused.run_id, tool_call_id=paused.pending[0].tool_call_id
        )
        assert done.finish_reason == "stop" and done.text == "Deleted T-7."
    assert calls(call_log) == ["delete_ticket T-7"]
