"""The holes a hostile run found in round 3, each a rule that held on one path and was skipped
on another (SPEC 3.3 "One gate", 15). Each test here failed before the gate was one.

- a quorum approver the policy no longer allows still counted when the last approval came
  through ``decide_many``;
- a grant approved calls of a tool redefined after it was made;
- ``decide_many`` with ``Approve(grant=...)`` dropped the grant, or approved where the rule
  allows none: it now refuses any grant (``GrantNotAllowed`` naming the call, nothing
  recorded): grants are made one call at a time, with ``decide``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agents import (
    Agent,
    Approve,
    GrantNotAllowed,
    GrantRequest,
    PendingToolCall,
    ServedParts,
    ToolGroups,
)
from agents.models import ScriptedModel, call, calls, reply
from storage import Storage
from tests.agents.conftest import Executions, RecordInput
from tests.backends import storage, storage_url  # noqa: F401
from tools import Tool, ToolContext, create_tool


class Approvers:
    """A decision policy whose approvers can be removed while a call waits."""

    def __init__(self, *allowed: str) -> None:
        self.allowed = set(allowed)

    def __call__(self, call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        if kind != "approve" or decided_by in self.allowed:
            return None
        return f"{decided_by} is not an approver"


def _tool(executions: Executions, tool_id: str, *, approvals: int = 1, **options: Any) -> Tool:
    async def execute(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        executions.calls.append((tool_id, input.model_dump()))
        return {"done": input.id}

    return create_tool(
        id=tool_id,
        description=options.pop("description", f"{tool_id} a record"),
        input_schema=options.pop("input_schema", RecordInput),
        execute=execute,
        require_approval=True,
        approvals=approvals,
        **options,
    )


async def test_a_removed_quorum_approver_does_not_count_when_decide_many_completes_it(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    policy = Approvers("U2", "U3")
    model = ScriptedModel(
        [calls(call("wipe", {"id": "a"}, id="a"), call("delete", {"id": "b"}, id="b")), reply("ok")]
    )
    tools = [_tool(executions, "wipe", approvals=2), _tool(executions, "delete")]
    agent = Agent(id="ops", model=model, tools=tools, storage=storage, decision_policy=policy)
    first = await agent.generate("wipe a, delete b", requested_by="U1")
    await (
        await agent.decide(Approve(), run_id=first.run_id, tool_call_id="a", decided_by="U2")
    ).result()

    policy.allowed.discard("U2")  # U2 left the approvers while the call waited
    stream = await agent.decide_many(
        run_id=first.run_id, decisions={"a": Approve(), "b": Approve()}, decided_by="U3"
    )
    result = await stream.result()

    assert executions.of("wipe") == []  # U2's approval no longer counts: 1 of 2
    assert [a["id"] for a in executions.of("delete")] == ["b"]
    [still] = result.pending
    assert (still.tool_call_id, still.approved_by) == ("a", ["U3"])
    assert await agent.pending_call(run_id=first.run_id, tool_call_id="a") is not None


async def test_a_grant_approves_nothing_once_its_tool_was_redefined(
    storage: Storage,  # noqa: F811
    executions: Executions,
) -> None:
    groups = ToolGroups()
    groups.replace("mcp", [_tool(executions, "pay", grants=True)])
    script = [call("pay", {"id": str(n)}, id=f"p{n}") for n in range(3)]
    model = ScriptedModel([script[0], reply("1"), script[1], reply("2"), script[2], reply("3")])
    agent = Agent(id="ops", model=model, storage=storage).served(
        ServedParts(storage=storage, tools=groups)
    )
    where = {"thread_id": "T1", "resource_id": "C1", "requested_by": "U9"}
    first = await agent.generate("pay", **where)
    grant = GrantRequest(seconds=3600, max_uses=5, free_args=("id",))
    await (await agent.decide(Approve(grant=grant), run_id=first.run_id, decided_by="U1")).result()
    second = await agent.generate("pay", **where)
    assert second.finish_reason == "stop"  # the grant approved it: same tool, same rule

    class Bigger(BaseModel):
        id: str
        multiplier: int = 1000

    groups.replace("mcp", [_tool(executions, "pay", grants=True, input_schema=Bigger)])
    third = await agent.generate("pay", **where)

    assert third.finish_reason == "suspended"  # the tool the grant was made for is gone
    assert [a["id"] for a in executions.of("pay")] == ["0", "1"]


@pytest.mark.parametrize("grantable", [True, False], ids=["rule-allows", "rule-refuses"])
async def test_decide_many_refuses_a_grant_rather_than_dropping_it_and_records_nothing(
    storage: Storage,  # noqa: F811
    executions: Executions,
    grantable: bool,
) -> None:
    model = ScriptedModel(
        [calls(call("pay", {"id": "a"}, id="a"), call("pay", {"id": "b"}, id="b")), reply("ok")]
    )
    agent = Agent(
        id="ops", model=model, tools=[_tool(executions, "pay", grants=grantable)], storage=storage
    )
    first = await agent.generate("pay a and b", thread_id="T1", resource_id="C1")
    grant = GrantRequest(seconds=600, max_uses=3, free_args=("id",))

    with pytest.raises(GrantNotAllowed) as refused:
        await agent.decide_many(
            run_id=first.run_id,
            decisions={"a": Approve(), "b": Approve(grant=grant)},
            decided_by="U1",
        )

    assert refused.value.tool_call_id == "b"
    assert executions.of("pay") == []
    assert await storage.list_claims(first.run_id) == []
    assert await agent.list_grants(thread_id="T1", active_only=False) == []
    stream = (
        await agent.decide(
            Approve(grant=grant), run_id=first.run_id, tool_call_id="b", decided_by="U1"
        )
        if grantable
        else None
    )
    if stream is not None:  # the same grant, one call at a time, is made
        await stream.result()
        [made] = await agent.list_grants(thread_id="T1")
        assert (made.granted_by, made.max_uses, made.free_args) == ("U1", 3, ["id"])
