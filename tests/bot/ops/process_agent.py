"""The agent ``python -m bot`` serves in the ops process tests (``BOT_AGENT``).

Importing it warns (the JSON-logs test checks that the warning is a JSON line too). Its gated
``delete_record`` tool logs a line, and with ``TOOL_GATE_DIR`` set it writes ``started`` there
and waits for a ``release`` file: the drain test holds a tool mid-run that way, with no sleeps.
"""

from __future__ import annotations

import asyncio
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from tools import ToolContext, create_tool

warnings.warn("process_agent: an import-time warning", UserWarning, stacklevel=1)
logger = logging.getLogger("tests.process_agent")


class RecordInput(BaseModel):
    id: str


async def _delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
    logger.warning("deleting a record")
    gate = os.environ.get("TOOL_GATE_DIR")
    if gate:
        (Path(gate) / "started").touch()
        while not (Path(gate) / "release").exists():  # noqa: ASYNC110 - another process releases
            await asyncio.sleep(0.02)
    return {"deleted": input.id}


def _step(request: ModelRequest) -> ScriptItem:
    if request.messages and request.messages[-1].role == "tool":
        return reply("Deleted.")
    return call("delete_record", {"id": "abc-123"})


agent = Agent(
    id="ops",
    model=ScriptedModel([_step] * 100),
    tools={
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=RecordInput,
            execute=_delete,
            require_approval=True,
        )
    },
)
