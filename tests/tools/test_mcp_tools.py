"""``tools.mcp`` against a real MCP server (``mcp_servers/ops.py``) over stdio."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import tools.mcp
from tests.tools.conftest import OPS, calls
from tools import ToolContext, ToolError
from tools.mcp import (
    MCPServer,
    MCPServerUnavailable,
    MCPTool,
    MCPToolFailed,
    MissingEnvironmentVariable,
    mcp_tool_name,
)

pytestmark = pytest.mark.processes

SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


def _stdio(call_log: Path) -> MCPServer:
    return MCPServer.stdio(
        "ops",
        [sys.executable, OPS],
        env={"OPS_CALL_LOG": "${LOG}", "OPS_GREETING": "hello ${WHO}!"},
        environ={"LOG": str(call_log), "WHO": "world"},
    )


@pytest.fixture
async def ops(call_log: Path) -> AsyncIterator[MCPServer]:
    async with _stdio(call_log) as server:
        yield server


async def _tools(server: MCPServer) -> dict[str, MCPTool]:
    return {tool.id: tool for tool in await server.list_tools()}


async def test_tools_are_named_server_underscore_tool_and_carry_the_servers_schema(
    ops: MCPServer,
) -> None:
    tools = await _tools(ops)
    assert {"ops_read_ticket", "ops_delete_ticket", "ops_plain_write", "ops_set_label"} <= set(
        tools
    )
    assert all(SAFE.match(name) for name in tools)
    delete = tools["ops_delete_ticket"]
    assert (delete.server, delete.remote_name) == ("ops", "delete_ticket")
    assert delete.description == "Delete one ticket."
    assert delete.parameters_schema() == {
        "properties": {
            "ticket_id": {"title": "Ticket Id", "type": "string"},
            "reason": {"default": "", "title": "Reason", "type": "string"},
        },
        "required": ["ticket_id"],
        "type": "object",
        "title": "delete_ticketArguments",
    }


async def test_names_and_schemas_are_the_same_on_a_second_connection(
    ops: MCPServer, call_log: Path
) -> None:
    first = {name: tool.parameters_schema() for name, tool in (await _tools(ops)).items()}
    async with _stdio(call_log) as again:
        second = {name: tool.parameters_schema() for name, tool in (await _tools(again)).items()}
    assert first == second


async def test_gating_follows_the_annotations(ops: MCPServer) -> None:
    tools = await _tools(ops)
    read, delete = tools["ops_read_ticket"], tools["ops_delete_ticket"]
    plain, label = tools["ops_plain_write"], tools["ops_set_label"]
    assert read.require_approval is False and read.title == "Read a ticket"
    assert read.annotations["readOnlyHint"] is True
    assert delete.require_approval is True and delete.annotations["destructiveHint"] is True
    assert plain.require_approval is True and dict(plain.annotations) == {}
    assert label.require_approval is True and label.idempotent is True
    assert read.idempotent is False and delete.idempotent is False


async def test_executing_a_tool_calls_the_server_with_the_arguments(
    ops: MCPServer, call_log: Path
) -> None:
    tools = await _tools(ops)
    assert await tools["ops_read_ticket"].run({"ticket_id": "T-1"}, _ctx()) == {
        "id": "T-1",
        "status": "open",
    }
    assert await tools["ops_plain_write"].run({"value": 3}, _ctx()) == {"result": "wrote 3"}
    assert await tools["ops_greeting"].run({}, _ctx()) == {"result": "hello world!"}
    assert calls(call_log) == ["read_ticket T-1", "plain_write 3"]


async def test_a_server_side_error_is_a_tool_error_the_model_sees(ops: MCPServer) -> None:
    tools = await _tools(ops)
    with pytest.raises(MCPToolFailed, match="boom") as caught:
        await tools["ops_fail"].run({"message": "boom"}, _ctx())
    assert isinstance(caught.value, ToolError) and caught.value.tool_name == "fail"
    with pytest.raises(ToolError, match="ticket_id"):
        await tools["ops_read_ticket"].run({"wrong": 1}, _ctx())


async def test_list_changed_refreshes_the_tool_list(ops: MCPServer) -> None:
    tools = await _tools(ops)
    assert "ops_fresh" not in tools
    await tools["ops_add_tool"].run({"name": "fresh"}, _ctx())
    for _ in range(50):
        if "ops_fresh" in await _tools(ops):
            break
        await asyncio.sleep(0.05)
    fresh = (await _tools(ops))["ops_fresh"]
    assert fresh.require_approval is False
    assert await fresh.run({}, _ctx()) == {"result": "added"}


async def test_long_and_unsafe_names_are_shortened_deterministically(ops: MCPServer) -> None:
    remote = "a.very/long tool name that will not fit in sixty-four characters at all!!"
    [tool] = [t for t in await ops.list_tools() if t.remote_name == remote]
    assert SAFE.match(tool.id) and tool.id == mcp_tool_name("ops", remote)
    assert await tool.run({}, _ctx()) == {"result": "long"}


def test_safe_names_stay_and_unsafe_ones_get_a_hash_that_keeps_them_apart() -> None:
    assert mcp_tool_name("github", "create_issue") == "github_create_issue"
    dotted, slashed = mcp_tool_name("s", "a.b"), mcp_tool_name("s", "a/b")
    assert dotted != slashed and SAFE.match(dotted) and SAFE.match(slashed)
    long = mcp_tool_name("s", "x" * 100)
    assert len(long) == 64 and SAFE.match(long) and long == mcp_tool_name("s", "x" * 100)
    assert long != mcp_tool_name("s", "x" * 101)


def test_a_missing_environment_variable_is_named() -> None:
    with pytest.raises(MissingEnvironmentVariable, match="GITHUB_TOKEN") as caught:
        MCPServer.stdio("gh", ["x"], env={"TOKEN": "${GITHUB_TOKEN}"}, environ={})
    assert caught.value.variable == "GITHUB_TOKEN"
    with pytest.raises(MissingEnvironmentVariable, match="API_KEY"):
        MCPServer.http("gh", "http://127.0.0.1:1/mcp", headers={"X-Key": "${API_KEY}"})


async def test_a_server_that_cannot_start_is_a_clear_tool_error() -> None:
    server = MCPServer.stdio("gone", ["/nonexistent/mcp-server"], connect_timeout=5)
    with pytest.raises(MCPServerUnavailable, match=r"'gone'.*could not be started"):
        await server.connect()
    with pytest.raises(MCPServerUnavailable, match="next reconnection attempt"):
        await server.list_tools()


def test_every_public_name_and_error_is_exported() -> None:
    assert list(tools.mcp.__all__) == sorted(tools.mcp.__all__, key=lambda n: (not n.isupper(), n))
    for name in tools.mcp.__all__:
        assert hasattr(tools.mcp, name)
    errors = [MCPServerUnavailable, MCPToolFailed, MissingEnvironmentVariable]
    assert all(cls.__name__ in tools.mcp.__all__ and issubclass(cls, ToolError) for cls in errors)
