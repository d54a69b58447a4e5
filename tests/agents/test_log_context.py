"""Log lines written during a run carry its ids (``log_context()``), and only while it runs."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agents import Agent, log_context
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import ToolContext, create_tool


class NoInput(BaseModel):
    pass


@pytest.mark.parametrize("thread_id", ["t1", None], ids=["thread", "no-thread"])
async def test_a_tool_sees_its_run_thread_and_call_ids_and_nothing_leaks_after(
    thread_id: str | None,
) -> None:
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
    result = await agent.generate("go", thread_id=thread_id)
    expected = {"run_id": result.run_id, "tool_call_id": "c1"}
    if thread_id is not None:  # a run without a thread logs no thread id
        expected["thread_id"] = thread_id
    assert seen == [expected]
    assert log_context() == {}
