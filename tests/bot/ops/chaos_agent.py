"""The agent the chaos test's ``python -m bot`` processes serve (``BOT_AGENT``).

A mention "delete r7" / "label r7" / "refund r7" asks for one gated call on ``r7``:

- ``delete_record``: not idempotent (a crash mid-call is reported interrupted);
- ``set_label``: idempotent (a crash mid-call is retried with the same idempotency key);
- ``refund``: not idempotent, needs two approvers (the two-person rule).

Each tool appends ``start <tool> <id> <pid>`` to ``$EXECUTIONS_FILE`` on its first line and
``done <tool> <id> <pid>`` on its last, and takes a while in between (a fixed time per id, up
to 1.5 s), so the test can kill or pause the very process that is running a call. Once the
result is in, the model answers ``Done <id>.`` or ``Not done <id>: <status>.``: exactly one
answer per call.
"""

from __future__ import annotations

import asyncio
import json
import os
import zlib
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from tools import ToolContext, create_tool

TOOLS = {"delete": "delete_record", "label": "set_label", "refund": "refund"}
"""The word a mention starts with → the tool it asks for."""


class RecordInput(BaseModel):
    id: str


def _log(line: str) -> None:
    fd = os.open(os.environ["EXECUTIONS_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, f"{line}\n".encode())  # one write: lines of processes never mix
    finally:
        os.close(fd)


def _tool(name: str) -> Any:
    async def run(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        _log(f"start {name} {input.id} {os.getpid()}")
        await asyncio.sleep((zlib.crc32(input.id.encode()) % 16) / 10)  # 0 to 1.5 s
        _log(f"done {name} {input.id} {os.getpid()}")
        return {"done": input.id}

    return run


def _step(request: ModelRequest) -> ScriptItem:
    last = request.messages[-1]
    user = next(m for m in reversed(request.messages) if m.role == "user")
    word, record = (user.content or "").split()[-2:]
    if last.role == "tool":
        result = json.loads(last.content or "{}")
        if result.get("done") == record:
            return reply(f"Done {record}.")
        return reply(f"Not done {record}: {result.get('status', 'error')}.")
    return call(TOOLS[word], {"id": record})


agent = Agent(
    id="ops",
    model=ScriptedModel([_step] * 100_000),
    tools={
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=RecordInput,
            execute=_tool("delete_record"),
            require_approval=True,
        ),
        "set_label": create_tool(
            id="set-label",
            description="Set a record's label (idempotent)",
            input_schema=RecordInput,
            execute=_tool("set_label"),
            require_approval=True,
            idempotent=True,
        ),
        "refund": create_tool(
            id="refund",
            description="Refund an order (two people must approve)",
            input_schema=RecordInput,
            execute=_tool("refund"),
            require_approval=True,
            approvals=2,
        ),
    },
)
