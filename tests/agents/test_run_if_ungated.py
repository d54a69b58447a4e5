"""``Agent.run_if_ungated``: a call the gate holds nothing of runs at once with no run stored;
every rule that would hold it in a run holds it here too (it returns None and nothing runs).
The gateway answers its MCP clients' ungated calls this way."""

from __future__ import annotations

from typing import Any

from agents import Agent, CallRules, Hooks, ServedParts, ToolCallInfo
from agents.models import ScriptedModel
from storage import Storage
from tests.agents.conftest import Executions, RecordInput
from tests.backends import storage, storage_url  # noqa: F401
from tests.counting import CountingStorage
from tools import ApprovalContext, Tool, ToolContext, ToolError, create_tool


def _tool(executions: Executions, tool_id: str, **options: Any) -> Tool:
    async def execute(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        if input.id == "boom":
            raise ToolError("the record is locked")
        executions.calls.append((tool_id, input.model_dump()))
        return {"done": input.id}

    return create_tool(
        id=tool_id,
        description=f"{tool_id} a record",
        input_schema=RecordInput,
        execute=execute,
        **options,
    )


def _big_ones(name: str, tool_id: str, path: tuple[str, ...], args: dict[str, Any]) -> CallRules:
    """The host's rule: ``read`` of record "big" needs approval."""
    return CallRules(require_approval=args.get("id") == "big")


async def test_an_ungated_call_runs_at_once_and_stores_no_run(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    seen: list[str] = []

    async def before(info: ToolCallInfo) -> None:
        seen.append(info.tool_name)

    counted = CountingStorage(storage)
    agent = Agent(
        id="gw",
        model=ScriptedModel([]),
        tools=[_tool(executions, "read")],
        storage=counted,
        hooks=Hooks(before_tool_call=before),
    )
    ran = await agent.run_if_ungated("read", {"id": "a"}, requested_by="U1")

    assert ran is not None and (ran.result, ran.failed) == ({"done": "a"}, False)
    assert executions.of("read") == [{"id": "a"}] and seen == ["read"]  # the same executor
    assert counted.calls == {}  # no run stored: not a read, not a write
    failed = await agent.run_if_ungated("read", {"id": "boom"})
    assert failed is not None and failed.failed
    assert failed.result == {"error": "the record is locked"}


async def test_every_rule_that_holds_a_runs_call_holds_it_here_and_nothing_runs(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    def only_b(context: ApprovalContext) -> bool:
        return context.args.get("id") == "b"

    tools = [
        _tool(executions, "delete", require_approval=True),  # the tool's own rule
        _tool(executions, "tag", require_approval=only_b),  # its predicate
        _tool(executions, "read"),  # the host's rule, below
        _tool(executions, "wipe"),  # the agent's run rule, below
    ]
    agent = Agent(
        id="gw",
        model=ScriptedModel([]),
        tools=tools,
        storage=storage,
        default_options={"require_tool_approval": lambda c: c.tool_name == "wipe"},
    ).served(ServedParts(storage=storage, call_rules=_big_ones))

    assert await agent.run_if_ungated("delete", {"id": "a"}) is None
    assert await agent.run_if_ungated("tag", {"id": "b"}) is None
    assert await agent.run_if_ungated("read", {"id": "big"}) is None
    assert await agent.run_if_ungated("wipe", {"id": "a"}) is None  # the agent's run rule
    assert await agent.run_if_ungated("nope", {"id": "a"}) is None  # no such tool: a run says so
    assert executions.calls == []
    assert await agent.run_if_ungated("tag", {"id": "c"}) is not None
    assert await agent.run_if_ungated("read", {"id": "small"}) is not None
    assert [name for name, _ in executions.calls] == ["tag", "read"]
