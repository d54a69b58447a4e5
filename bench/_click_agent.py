"""The agent ``python -m bench clicks`` serves with ``BOT_AGENT=bench._click_agent:AGENT``.

A scripted model that calls ``delete_record`` (gated) with the last word of the user's message,
then answers with the tool's result. The tool counts its executions per record id and the answer
says the count (``Deleted rec-3 (execution 1).``), so the bench can check over the wire, from the
Slack messages alone, that every card's tool ran exactly once.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from tools import ToolContext, create_tool

EXECUTIONS: Counter[str] = Counter()
"""Executions of ``delete_record`` per record id, in the serving process."""

_SCRIPT_LENGTH = 200_000
"""Model requests the agent can answer (two per card)."""


class DeleteInput(BaseModel):
    id: str


async def _delete(input: DeleteInput, ctx: ToolContext) -> dict[str, Any]:
    EXECUTIONS[input.id] += 1
    return {"deleted": input.id, "execution": EXECUTIONS[input.id]}


def _next_step(request: ModelRequest) -> ScriptItem:
    last = request.messages[-1]
    if last.role == "tool":
        result = json.loads(last.content or "{}")
        return reply(f"Deleted {result.get('deleted')} (execution {result.get('execution')}).")
    words = (last.content or "").split()
    return call("delete_record", {"id": words[-1] if words else "?"})


AGENT = Agent(
    id="bench-clicks",
    name="Bench",
    instructions="You delete records.",
    model=ScriptedModel([_next_step] * _SCRIPT_LENGTH),
    tools={
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=DeleteInput,
            execute=_delete,
            require_approval=True,
        )
    },
)
"""The served agent (the bot gives it its storage)."""
