"""The agent ``python -m bot`` serves in the many-instances test (``BOT_AGENT``).

Stateless script (each process has its own model): a gated ``delete_record`` call, then an
answer once the tool result is in. Every real execution appends a line to ``$EXECUTIONS_FILE``,
so the test counts executions across processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from tools import ToolContext, create_tool


class RecordInput(BaseModel):
    id: str


def _delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:  # runs in a worker thread
    with open(os.environ["EXECUTIONS_FILE"], "a", encoding="utf-8") as log:
        log.write(f"{ctx.tool_call_id} {input.id}\n")
    return {"deleted": input.id}


def _step(request: ModelRequest) -> ScriptItem:
    if request.messages and request.messages[-1].role == "tool":
        return reply("Deleted.")
    return call("delete_record", {"id": "abc-123"})


def gated_ops_agent(execute: Callable[[Any, ToolContext], Any]) -> Agent:
    """The ops agent of the process tests: a gated ``delete_record`` running ``execute``."""
    return Agent(
        id="ops",
        model=ScriptedModel([_step] * 100),
        tools={
            "delete_record": create_tool(
                id="delete-record",
                description="Delete a record by id",
                input_schema=RecordInput,
                execute=execute,
                require_approval=True,
            )
        },
    )


agent = gated_ops_agent(_delete)
