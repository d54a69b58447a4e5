import threading
from typing import Any

import pytest
from pydantic import BaseModel

from tools import (
    InvalidSuspendPayload,
    Suspended,
    ToolContext,
    ToolDefinitionError,
    ToolInputError,
    ToolOutputError,
    create_tool,
)


class In(BaseModel):
    id: str


class Out(BaseModel):
    deleted: str


class Question(BaseModel):
    question: str


def _ctx() -> ToolContext:
    return ToolContext(run_id="r", tool_call_id="c", agent_id="a", idempotency_key="r:c")


async def test_a_plain_def_runs_in_a_worker_thread() -> None:
    threads: list[str] = []

    def execute(input: In, ctx: ToolContext) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return {"deleted": input.id}

    tool = create_tool(id="t", description="", input_schema=In, execute=execute)
    assert await tool.run({"id": "1"}, _ctx()) == {"deleted": "1"}
    assert threads and threads[0] != threading.main_thread().name


async def test_output_is_validated_against_the_output_schema() -> None:
    async def good(input: In, ctx: ToolContext) -> Out:
        return Out(deleted=input.id)

    async def bad(input: In, ctx: ToolContext) -> dict[str, Any]:
        return {"nope": 1}

    ok = create_tool(id="t", description="", input_schema=In, output_schema=Out, execute=good)
    assert await ok.run({"id": "1"}, _ctx()) == {"deleted": "1"}
    broken = create_tool(id="t", description="", input_schema=In, output_schema=Out, execute=bad)
    with pytest.raises(ToolOutputError):
        await broken.run({"id": "1"}, _ctx())


async def test_invalid_input_raises_tool_input_error() -> None:
    async def execute(input: In, ctx: ToolContext) -> None:
        return None

    tool = create_tool(id="t", description="", input_schema=In, execute=execute)
    with pytest.raises(ToolInputError, match="id"):
        await tool.run({}, _ctx())


async def test_suspend_validates_its_payload_and_the_call_stays_suspended() -> None:
    async def execute(input: In, ctx: ToolContext) -> Any:
        await ctx.suspend({"question": "which?"})
        return {"ignored": True}  # returning something else after suspend() still suspends

    tool = create_tool(
        id="t", description="", input_schema=In, suspend_schema=Question, execute=execute
    )
    assert await tool.run({"id": "1"}, _ctx()) == Suspended({"question": "which?"})

    async def invalid(input: In, ctx: ToolContext) -> Any:
        return await ctx.suspend({"wrong": 1})

    bad = create_tool(
        id="t", description="", input_schema=In, suspend_schema=Question, execute=invalid
    )
    with pytest.raises(InvalidSuspendPayload, match="suspend_schema"):
        await bad.run({"id": "1"}, _ctx())


def test_create_tool_rejects_what_it_cannot_use() -> None:
    async def execute(input: In, ctx: ToolContext) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="input_schema"):
        create_tool(id="t", description="", input_schema=dict, execute=execute)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="require_approval"):
        create_tool(
            id="t", description="", input_schema=In, execute=execute, require_approval="yes"
        )  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="id"):
        create_tool(id="", description="", input_schema=In, execute=execute)
