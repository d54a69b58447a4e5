"""A lost MCP session (the HTTP server restarted: ``Session not found``) is reopened once and
the call retried: the server refused the old session before it dispatched anything, so the
call never reached it and running it on the new session runs it once (SPEC 14, issue 33)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import Agent
from agents.models import ScriptedModel, call, reply
from tests.tools.conftest import HttpServer, calls
from tools import ToolContext
from tools.mcp import MCPServer

pytestmark = pytest.mark.processes


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


async def test_a_call_after_the_http_server_restarted_reopens_the_session_and_runs_once(
    http_server: HttpServer, call_log: Path
) -> None:
    async with MCPServer.http("ops", http_server.url) as server:
        tools = {tool.id: tool for tool in await server.list_tools()}
        http_server.stop()
        http_server.start()  # back at once: the old session id is unknown to it
        done = await tools["ops_delete_ticket"].run({"ticket_id": "T-1"}, _ctx())
    assert done == {"result": "deleted T-1"}
    assert calls(call_log) == ["delete_ticket T-1"]


async def test_an_approval_given_after_the_server_restarted_runs_the_call_once(
    http_server: HttpServer, call_log: Path
) -> None:
    async with MCPServer.http("ops", http_server.url) as server:
        model = ScriptedModel(
            [call("ops_delete_ticket", {"ticket_id": "T-7"}), reply("Deleted T-7.")]
        )
        agent = Agent(id="ops", model=model, tools=await server.list_tools())
        paused = await agent.generate("Delete ticket T-7")  # the card is out
        assert paused.finish_reason == "suspended"
        http_server.stop()
        http_server.start()  # restarted between the card and the click
        done = await agent.approve_tool_call_generate(
            run_id=paused.run_id, tool_call_id=paused.pending[0].tool_call_id
        )
        assert done.tool_results[0].result == {"result": "deleted T-7"}
        assert done.text == "Deleted T-7."
    assert calls(call_log) == ["delete_ticket T-7"]
