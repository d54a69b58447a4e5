"""``ServedParts(tools=source)``: tools that change while an agent is served (the bot's MCP
tools), read from their source at each model turn; ``ToolGroups`` refuses a name taken."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from pydantic import BaseModel

from agents import Agent, AgentConfigError, ServedParts, ToolGroups
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


async def test_a_sources_tool_is_offered_and_runs_with_its_own_gating() -> None:
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
    source = ToolGroups(taken=agent.tools)
    source.replace("ops", [_tool("ops_read"), _tool("ops_delete", require_approval=True)])
    served = agent.served(ServedParts(tools=source))
    assert sorted(served.tools) == ["ops_delete", "ops_read"]
    assert agent.tools == {}  # the agent given is unchanged
    result = await served.generate("tidy T-1")
    assert result.finish_reason == "suspended"
    assert [p.tool_name for p in result.pending] == ["ops_delete"]


def test_replacing_swaps_a_groups_previous_list_and_a_taken_name_is_refused() -> None:
    agent = Agent(id="ops", model=ScriptedModel([]), tools=[_tool("lookup")])
    source = ToolGroups(taken=agent.tools)
    served = agent.served(ServedParts(tools=source))
    source.replace("gh", [_tool("gh_a"), _tool("gh_b")])
    source.replace("gh", [_tool("gh_b"), _tool("gh_c")])
    assert sorted(served.tools) == ["gh_b", "gh_c", "lookup"]
    with pytest.raises(AgentConfigError, match="lookup"):
        source.replace("other", [_tool("lookup")])
    with pytest.raises(AgentConfigError, match="gh_c"):
        source.replace("other", [_tool("gh_c")])
    assert sorted(served.tools) == ["gh_b", "gh_c", "lookup"]


def test_a_delegation_name_is_refused_in_a_group() -> None:
    with pytest.raises(AgentConfigError, match="reserved"):
        ToolGroups().replace("gh", [_tool("agent-billing")])


async def test_tools_replaced_while_served_are_offered_from_the_next_run_on() -> None:
    model = ScriptedModel([reply("one"), reply("two")])
    source = ToolGroups()
    served = Agent(id="ops", model=model, storage=InMemoryStorage()).served(
        ServedParts(tools=source)
    )
    source.replace("gh", [_tool("gh_old")])
    await served.generate("first")
    source.replace("gh", [_tool("gh_new")])
    await served.generate("second")
    assert [[t.name for t in r.tools] for r in model.requests] == [["gh_old"], ["gh_new"]]


class _Clashing:
    """A source that does not check names: it offers one the agent has."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def current_tools(self) -> Mapping[str, Tool]:
        return {"lookup": self.tool}


def test_the_agents_own_tool_wins_a_name_a_source_also_offers() -> None:
    own = _tool("lookup")
    agent = Agent(id="ops", model=ScriptedModel([]), tools=[own])
    served = agent.served(ServedParts(tools=_Clashing(_tool("lookup"))))
    assert served.tools["lookup"] is own
