"""End to end: an ``Agent`` on ``OpenAIModel``, the REAL openai client, the fake server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI
from pydantic import BaseModel

from agents import Agent, ModelError
from agents.memory import Memory
from agents.models import OpenAIModel
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall
from tools import Tool, ToolContext, create_tool


def _ops(client: AsyncOpenAI, tools: list[Tool], **kwargs: Any) -> Agent:
    model = OpenAIModel("gpt-test", client=client)
    return Agent(id="ops", instructions="You run ops.", model=model, tools=tools, **kwargs)


async def test_agent_runs_a_tool_call_and_answers(
    openai_server: FakeOpenAIServer,
    openai_client: AsyncOpenAI,
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    openai_server.tool_calls(
        FakeToolCall("delete-record", {"id": "abc-123"}, id="call_1"), usage=(20, 5)
    )
    openai_server.reply("Deleted ", "abc-123.", usage=(30, 4))
    agent = _ops(openai_client, [make_tool("delete-record")])

    result = await agent.generate("Delete record abc-123")

    assert result.finish_reason == "stop"
    assert result.text == "Deleted abc-123."
    assert executions.of("delete-record") == [{"id": "abc-123"}]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (50, 9)
    first, second = openai_server.bodies
    assert first["tools"][0]["function"]["name"] == "delete-record"
    assert first["tools"][0]["function"]["strict"] is True
    assert first["messages"][0] == {"role": "system", "content": "You run ops."}
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert assistant["tool_calls"][0]["function"]["name"] == "delete-record"
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_1"
    assert "abc-123" in tool["content"]


async def test_a_call_needing_approval_waits_then_runs_after_approve(
    openai_server: FakeOpenAIServer,
    openai_client: AsyncOpenAI,
    make_tool: Callable[..., Tool],
    executions: Executions,
    store: InMemoryStorage,
) -> None:
    openai_server.tool_calls(FakeToolCall("delete-record", {"id": "abc-123"}, id="call_1"))
    openai_server.reply("Deleted.")
    agent = _ops(openai_client, [make_tool("delete-record", require_approval=True)], storage=store)

    waiting = await agent.generate("Delete record abc-123")

    assert waiting.finish_reason == "suspended"
    assert executions.calls == []
    assert len(openai_server.requests) == 1

    done = await agent.approve_tool_call_generate(run_id=waiting.run_id)

    assert done.finish_reason == "stop"
    assert done.text == "Deleted."
    assert executions.of("delete-record") == [{"id": "abc-123"}]


async def test_a_model_that_fails_for_good_ends_the_run_with_an_error_chunk(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail_forever(500, message="upstream exploded")
    agent = _ops(openai_client, [])

    stream = await agent.stream("hello")
    chunks = [chunk async for chunk in stream.full_stream]
    result = await stream.result()

    errors = [c for c in chunks if c.type == "error"]
    assert len(errors) == 1
    assert "upstream exploded" in str(errors[0].payload["error"])
    assert chunks[-1].type == "finish"
    assert result.finish_reason == "error"
    assert isinstance(result.error, ModelError)
    assert result.error.status == 500
    assert result.error.request_id == openai_server.requests[-1].request_id
    assert len(openai_server.requests) == 3  # the client's own retries, then the error


class TicketInput(BaseModel):
    title: str


class Question(BaseModel):
    question: str


class Priority(BaseModel):
    priority: str
    note: str = ""


async def test_auto_resume_extracts_the_answer_with_a_strict_structured_output_request(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI, store: InMemoryStorage
) -> None:
    opened: list[dict[str, Any]] = []

    async def open_ticket(input: TicketInput, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "What priority?"})
        opened.append({"title": input.title, "priority": ctx.resume_data.priority})
        return opened[-1]

    tool = create_tool(
        id="open-ticket",
        description="Open a ticket",
        input_schema=TicketInput,
        suspend_schema=Question,
        resume_schema=Priority,
        execute=open_ticket,
    )
    agent = _ops(
        openai_client,
        [tool],
        memory=Memory(storage=store),
        default_options={"auto_resume_suspended_tools": True},
    )
    thread = {"thread_id": "t-1", "resource_id": "u-1"}
    openai_server.tool_calls(FakeToolCall("open-ticket", {"title": "printer"}, id="t1"))
    openai_server.structured({"answered": True, "resume_data": {"priority": "high", "note": None}})
    openai_server.reply("Opened with high priority.")

    first = await agent.generate("open a ticket about the printer", **thread)
    second = await agent.generate("make it high", **thread)

    assert first.finish_reason == "suspended"
    assert second.text == "Opened with high priority."
    assert opened == [{"title": "printer", "priority": "high"}]
    extraction = openai_server.bodies[1]
    assert "tools" not in extraction
    json_schema = extraction["response_format"]["json_schema"]
    assert json_schema["strict"] is True
    assert json_schema["schema"]["required"] == ["answered", "resume_data"]
