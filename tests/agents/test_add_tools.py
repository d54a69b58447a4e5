"""``Agent.add_tools``: tools added to an agent that is already built (the bot's MCP tools)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agents import Agent, AgentConfigError
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import Tool, ToolContext, create_tool


class Ticket(BaseModel):
    ticket_id: str


def _tool(id: str, *, require_approval: bool = False) -> Tool:
    async def execute(input: Ticket, ctx: ToolContext) -> str:
        return f"{id} {input.ticket_id}"

    return create_tool(
        id=id,
        description=id,
        input_schema=Ticket,
        execute=execute,
        require_approval=require_approval,
    )


async def test_an_added_tool_is_offered_and_runs_with_its_own_gating() -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel(
            [
                call("ops_read", {"ticket_id": "T-1"}),
                call("ops_delete", {"ticket_id": "T-1"}),
                reply("done"),
            ]
        ),
        storage=InMemoryStorage(),
    )
    agent.add_tools([_tool("ops_read"), _tool("ops_delete", require_approval=True)])
    assert sorted(agent.tools) == ["ops_delete", "ops_read"]
    result = await agent.generate("tidy T-1")
    assert result.finish_reason == "suspended"
    assert [p.tool_name for p in result.pending] == ["ops_delete"]


def test_replacing_swaps_a_previous_list_and_a_taken_name_is_refused() -> None:
    agent = Agent(id="ops", model=ScriptedModel([]), tools=[_tool("lookup")])
    agent.add_tools([_tool("gh_a"), _tool("gh_b")])
    agent.add_tools([_tool("gh_b"), _tool("gh_c")], replacing=["gh_a", "gh_b"])
    assert sorted(agent.tools) == ["gh_b", "gh_c", "lookup"]
    with pytest.raises(AgentConfigError, match="lookup"):
        agent.add_tools([_tool("lookup")])
    assert sorted(agent.tools) == ["gh_b", "gh_c", "lookup"]
