"""Objects for ``BOT_AGENT`` tests: one Agent, one thing that is not an Agent."""

from __future__ import annotations

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import ToolContext, create_tool

agent = Agent(id="served", model=ScriptedModel([reply("served")]))
"""An agent without storage or memory: the bot serves it on the configured ones."""

own_store = InMemoryStorage()
agent_with_storage = Agent(id="own", model=ScriptedModel([]), storage=own_store)
"""An agent that brought its own storage."""

not_an_agent = "just a string"


class _Record(BaseModel):
    id: str


async def _delete(input: _Record, ctx: ToolContext) -> str:
    return f"deleted {input.id}"


_GATED_OPTIONS = {"require_tool_approval": True}


gated = Agent(
    id="gated",
    model=ScriptedModel([call("delete", {"id": "7"})]),
    default_options=_GATED_OPTIONS,
    tools=[
        create_tool(
            id="delete",
            description="d",
            input_schema=_Record,
            execute=_delete,
            require_approval=True,
        )
    ],
)
"""The README's ``BOT_AGENT`` example: built without storage, its one call needs approval."""
