"""Log lines written during a run carry its ids (``log_context()``), and only while it runs."""

from __future__ import annotations

from pydantic import BaseModel

from agents import Agent, log_context
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import ToolContext, create_tool


class NoInput(BaseModel):
    pass


async def test_a_tool_sees_its_run_thread_and_call_ids_and_nothing_leaks_after() -> None:
    seen: list[dict[str, str]] = []

    async def look(input: NoInput, ctx: ToolContext) -> dict[str, bool]:
        seen.append(log_context())
        return {"ok": True}

    agent = Agent(
        id="a",
        model=ScriptedModel([call("look", {}, id="c1"), reply("done")]),
        tools=[create_tool(id="look", description="look", input_schema=NoInput, execute=look)],
        storage=InMemoryStorage(),
    )
    result = await agent.generate("go", thread_id="t1")
    assert seen == [{"run_id": result.run_id, "thread_id": "t1", "tool_call_id": "c1"}]
    assert log_context() == {}


async def test_a_run_without_a_thread_logs_no_thread_id() -> None:
    seen: list[dict[str, str]] = []

    async def look(input: NoInput, ctx: ToolContext) -> dict[str, bool]:
        seen.append(log_context())
        return {"ok": True}

    agent = Agent(
        id="a",
        model=ScriptedModel([call("look", {}, id="c1"), reply("done")]),
        tools=[create_tool(id="look", description="look", input_schema=NoInput, execute=look)],
        storage=InMemoryStorage(),
    )
    result = await agent.generate("go")
    assert seen == [{"run_id": result.run_id, "tool_call_id": "c1"}]
