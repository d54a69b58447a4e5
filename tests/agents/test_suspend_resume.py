"""SPEC 2 and 3.3: suspend() during execution, resume with validated data."""

from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agents import Agent, AlreadyDecided, InvalidResumeData, ToolCallNotSuspended
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import ToolContext, create_tool


class TicketInput(BaseModel):
    title: str


class Question(BaseModel):
    question: str


class Priority(BaseModel):
    priority: Literal["low", "high"]


class Ticketing:
    def __init__(self, questions: int = 1) -> None:
        self.seen: list[tuple[Any, Any]] = []
        self.opened: list[dict[str, Any]] = []
        self.questions = questions

    async def execute(self, input: TicketInput, ctx: ToolContext) -> Any:
        self.seen.append((ctx.resume_data, ctx.suspend_payload))
        if ctx.resume_data is None or len(self.seen) <= self.questions:
            return await ctx.suspend(
                {"question": f"What priority for {input.title!r}? ({len(self.seen)})"}
            )
        ticket = {"title": input.title, "priority": ctx.resume_data.priority}
        self.opened.append(ticket)
        return ticket

    def tool(self) -> Any:
        return create_tool(
            id="open-ticket",
            description="Open a ticket",
            input_schema=TicketInput,
            suspend_schema=Question,
            resume_schema=Priority,
            execute=self.execute,
        )


def _agent(store: InMemoryStorage, ticketing: Ticketing, *script: Any) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel([call("open-ticket", {"title": "printer"}, id="t1"), *script]),
        tools=[ticketing.tool()],
        storage=store,
    )


async def test_suspend_emits_the_payload_and_resume_schema_and_generate_says_suspended(
    store: InMemoryStorage,
) -> None:
    ticketing = Ticketing()
    agent = _agent(store, ticketing)
    stream = await agent.stream("open a ticket about the printer")
    chunks = [c async for c in stream.full_stream]
    result = await stream.result()
    suspended = next(c for c in chunks if c.type == "tool-call-suspended")
    assert suspended.payload.suspend_payload == {"question": "What priority for 'printer'? (1)"}
    assert suspended.payload.resume_schema["properties"]["priority"]["enum"] == ["low", "high"]
    assert suspended.payload.tool_name == "open-ticket" and suspended.payload.args == {
        "title": "printer"
    }
    assert result.finish_reason == "suspended"
    assert result.suspend_payload is not None
    assert result.suspend_payload.requires_approval is False
    assert result.suspend_payload.suspend_payload == {
        "question": "What priority for 'printer'? (1)"
    }


async def test_invalid_resume_data_raises_with_the_errors_and_the_call_stays_suspended(
    store: InMemoryStorage,
) -> None:
    ticketing = Ticketing()
    agent = _agent(store, ticketing, reply("Opened."))
    first = await agent.generate("open")
    with pytest.raises(InvalidResumeData) as info:
        await agent.resume_stream({"priority": "urgent"}, run_id=first.run_id)
    assert info.value.errors[0]["loc"] == ["priority"]
    assert info.value.code == "AGENT_RESUME_INVALID_DATA"
    listed = await agent.list_suspended_runs()
    assert [c.tool_call_id for c in listed.runs[0].tool_calls] == ["t1"]

    stream = await agent.resume_stream({"priority": "high"}, run_id=first.run_id, decided_by="U1")
    chunks = [c async for c in stream.full_stream]
    done = await stream.result()
    resumed = next(c for c in chunks if c.type == "tool-call-resumed")
    assert resumed.payload.kind == "suspension" and resumed.payload.tool_call_id == "t1"
    assert done.text == "Opened."
    assert ticketing.opened == [{"title": "printer", "priority": "high"}]
    resume_data, suspend_payload = ticketing.seen[-1]
    assert resume_data == Priority(priority="high")
    assert suspend_payload == {"question": "What priority for 'printer'? (1)"}


async def test_a_tool_can_ask_a_second_question_on_resume(store: InMemoryStorage) -> None:
    ticketing = Ticketing(questions=2)
    agent = _agent(store, ticketing, reply("Opened."))
    first = await agent.generate("open")
    again = await agent.resume_generate({"priority": "low"}, run_id=first.run_id)
    assert again.finish_reason == "suspended"
    assert again.pending[0].suspend_payload == {"question": "What priority for 'printer'? (2)"}
    done = await agent.resume_generate({"priority": "high"}, run_id=first.run_id)
    assert done.finish_reason == "stop"
    assert ticketing.opened == [{"title": "printer", "priority": "high"}]
    with pytest.raises(AlreadyDecided):
        await agent.resume_stream({"priority": "low"}, run_id=first.run_id, tool_call_id="t1")


async def test_an_invalid_suspend_payload_is_a_tool_error_not_a_suspension(
    store: InMemoryStorage,
) -> None:
    async def execute(input: TicketInput, ctx: ToolContext) -> Any:
        return await ctx.suspend({"not_a_question": 1})

    tool = create_tool(
        id="open-ticket",
        description="",
        input_schema=TicketInput,
        suspend_schema=Question,
        execute=execute,
    )
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("open-ticket", {"title": "x"}), reply("could not")]),
        tools=[tool],
        storage=store,
    )
    result = await agent.generate("open")
    assert result.finish_reason == "stop"
    assert "suspend_schema" in result.tool_results[0].result["error"]


async def test_approval_methods_refuse_a_suspended_call_and_resume_refuses_an_approval(
    store: InMemoryStorage,
) -> None:
    agent = _agent(store, Ticketing())
    first = await agent.generate("open")
    with pytest.raises(ToolCallNotSuspended, match="resume_stream"):
        await agent.approve_tool_call(run_id=first.run_id)

    class In(BaseModel):
        id: str

    async def noop(input: In, ctx: ToolContext) -> None:
        return None

    gated = create_tool(
        id="rm", description="", input_schema=In, execute=noop, require_approval=True
    )
    other = Agent(
        id="o", model=ScriptedModel([call("rm", {"id": "1"})]), tools=[gated], storage=store
    )
    held = await other.generate("rm")
    with pytest.raises(ToolCallNotSuspended, match="approve_tool_call"):
        await other.resume_stream({}, run_id=held.run_id)
