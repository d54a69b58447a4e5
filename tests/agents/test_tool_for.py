"""``Agent.tool_for``: the tool behind a pending call, also when a sub-agent owns it."""

from __future__ import annotations

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import Tool, ToolContext, create_tool


class RefundInput(BaseModel):
    order: int
    amount: float


async def _refund(input: RefundInput, ctx: ToolContext) -> dict[str, int]:
    return {"refunded": input.order}


def _refund_tool() -> Tool:
    return create_tool(
        id="refund",
        description="Issue a refund",
        input_schema=RefundInput,
        execute=_refund,
        require_approval=True,
    )


async def test_tool_for_finds_the_tool_of_a_sub_agent_pending_call() -> None:
    refund = _refund_tool()
    billing = Agent(
        id="billing",
        model=ScriptedModel([call("refund", {"order": 7, "amount": 250.0}), reply("done")]),
        tools={"refund": refund},
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 7"}), reply("ok")]),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    result = await ops.generate("refund order 7")
    [pending] = result.pending
    assert pending.agent_path == ["ops", "billing"]
    assert ops.tool_for(pending) is refund
    assert billing.tool_for(pending) is None


async def test_tool_for_is_none_for_a_tool_the_agent_no_longer_has() -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("refund", {"order": 1, "amount": 1.0})]),
        tools={"refund": _refund_tool()},
        storage=InMemoryStorage(),
    )
    [pending] = (await agent.generate("refund 1")).pending
    assert agent.tool_for(pending) is agent.tools["refund"]
    renamed = Agent(id="ops", model=ScriptedModel([]), tools={}, storage=agent.storage)
    assert renamed.tool_for(pending) is None
