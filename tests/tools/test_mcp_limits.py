"""SPEC 14: every MCP call has a timeout, and the model gets results cut to size, never base64.

Against the real SDK server ``mcp_servers/ops.py`` over stdio: a tool that never answers, one
that answers with megabytes of text, one that answers with an image.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from tests.tools.conftest import OPS
from tools import ToolContext
from tools.mcp import MCPCallTimedOut, MCPServer, MCPTool
from tools.mcp._output import capped

pytestmark = pytest.mark.processes


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


def _server(**limits: float) -> MCPServer:
    return MCPServer.stdio("ops", [sys.executable, OPS], **limits)  # type: ignore[arg-type]


async def _tool(server: MCPServer, name: str) -> MCPTool:
    return next(t for t in await server.list_tools() if t.id == f"ops_{name}")


async def test_a_call_that_never_answers_times_out_with_a_tool_error_and_a_fresh_session() -> None:
    async with _server(call_timeout=0.5) as server:
        hang, pid = await _tool(server, "hang"), await _tool(server, "pid")
        before = await pid.run({}, _ctx())
        with pytest.raises(MCPCallTimedOut) as raised:
            await hang.run({}, _ctx())
        assert "no answer within 0.5 s" in str(raised.value)
        after = await pid.run({}, _ctx())  # the next call works, on a new session
    assert after != before


async def test_a_huge_result_reaches_the_model_cut_with_a_note_and_the_whole_digest() -> None:
    size = 2_000_000
    async with _server(output_max_bytes=1_000) as server:
        shown = await (await _tool(server, "huge")).run({"size": size}, _ctx())
    whole = ("0123456789abcdef" * (size // 16 + 1))[:size]
    assert isinstance(shown, str) and shown.startswith(whole[:1_000])
    assert len(shown) < 1_400
    assert f"{size - 1_000:,} of {size:,} bytes left out" in shown
    assert hashlib.sha256(whole.encode()).hexdigest() in shown


async def test_a_result_that_fits_is_given_whole() -> None:
    async with _server(output_max_bytes=1_000) as server:
        shown = await (await _tool(server, "huge")).run({"size": 900}, _ctx())
    assert shown == ("0123456789abcdef" * 60)[:900]


async def test_an_image_is_described_not_sent_as_base64() -> None:
    async with _server() as server:
        shown = await (await _tool(server, "picture")).run({}, _ctx())
    assert shown == ["the chart", "[image: image/png, 4,104 bytes, not shown]"]


def test_a_cut_never_splits_a_character() -> None:
    shown = capped("é" * 100, 51)  # 2 bytes each: 25 fit
    assert shown.startswith("é" * 25 + "\n[countersign:")


def test_limits_must_be_positive(tmp_path: Path) -> None:
    from tools import ToolDefinitionError

    with pytest.raises(ToolDefinitionError):
        _server(call_timeout=0)
    with pytest.raises(ToolDefinitionError):
        _server(output_max_bytes=0)


async def test_a_huge_result_is_cut_off_the_event_loop_so_other_work_goes_on_meanwhile() -> None:
    """A 20 MB result is measured and cut in a worker thread: while it is cut, the event loop
    serves other work (another thread's Slack ack), instead of waiting for it."""
    import asyncio

    from mcp import types as mcp_types

    from tools.mcp._tools import to_tool_result

    huge = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="x" * 20_000_000)]
    )
    cutting = asyncio.create_task(to_tool_result("ops", "huge", huge, max_bytes=1_000))
    await asyncio.sleep(0)  # the cut starts
    served: list[bool] = []

    async def other_work() -> None:
        served.append(cutting.done())

    await asyncio.create_task(other_work())
    shown = await cutting
    assert served == [False]  # served while the cut was still going on
    assert isinstance(shown, str) and "19,999,000 of 20,000,000 bytes left out" in shown
