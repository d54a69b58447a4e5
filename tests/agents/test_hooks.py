from collections.abc import Callable
from typing import Any

from agents import Agent, Hooks, ToolCallInfo
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tools import Tool


async def test_before_tool_call_can_skip_the_tool_and_supply_its_output(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    seen: list[ToolCallInfo] = []

    async def guard(info: ToolCallInfo) -> dict[str, Any]:
        seen.append(info)
        return {"proceed": False, "output": {"skipped": True}}

    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1"), reply("ok")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
        hooks=Hooks(before_tool_call=guard),
    )
    first = await agent.generate("x", request_context={"team": "T1"})
    assert seen == []  # never before approval
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert executions.calls == []
    assert done.tool_results[0].result == {"skipped": True}
    assert (seen[0].tool_name, seen[0].input, seen[0].tool_call_id) == (
        "delete-record",
        {"id": "1"},
        "c1",
    )
    assert seen[0].run_id == first.run_id and seen[0].request_context == {"team": "T1"}


async def test_a_hook_returning_nothing_lets_the_tool_run_and_after_sees_the_result(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    after: list[Any] = []
    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}), reply("ok")]),
        tools=[make_tool()],
        storage=store,
        hooks=Hooks(
            before_tool_call=lambda info: None,
            after_tool_call=lambda info: after.append(info.result),
        ),
    )
    await agent.generate("x")
    assert executions.calls == [("delete-record", {"id": "1"})]
    assert after == [{"ok": True, "id": "1"}]
