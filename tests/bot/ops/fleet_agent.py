"""The agent three ``python -m bot`` processes serve in the fleet test (``BOT_AGENT``).

"delete record r1" → a gated ``delete_record`` call on ``r1``; once the result is in, the model
answers ``Deleted r1.`` or ``Not done: <status>.``. With ``hold-<id>`` in ``$GATE_DIR`` the tool
writes ``started-<id>`` and waits for ``release-<id>`` (the test holds a tool mid-run that way).
Every finished execution appends ``<id>`` to ``$EXECUTIONS_FILE``. ``FLEET_IDEMPOTENT=1`` makes
the tool idempotent (a takeover retries it instead of reporting it interrupted).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from tools import ToolContext, create_tool


class RecordInput(BaseModel):
    id: str


async def _delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
    gate = Path(os.environ["GATE_DIR"])
    if (gate / f"hold-{input.id}").exists():
        (gate / f"started-{input.id}").touch()
        while not (gate / f"release-{input.id}").exists():  # noqa: ASYNC110 - the test releases
            await asyncio.sleep(0.02)
    with open(os.environ["EXECUTIONS_FILE"], "a", encoding="utf-8") as log:  # noqa: ASYNC230
        log.write(f"{input.id}\n")
    return {"deleted": input.id}


def _step(request: ModelRequest) -> ScriptItem:
    last = request.messages[-1]
    if last.role == "tool":
        result = json.loads(last.content or "{}")
        if "deleted" in result:
            return reply(f"Deleted {result['deleted']}.")
        return reply(f"Not done: {result.get('status', 'error')}.")
    user = next(m for m in reversed(request.messages) if m.role == "user")
    return call("delete_record", {"id": (user.content or "").split()[-1]})


agent = Agent(
    id="ops",
    model=ScriptedModel([_step] * 1000),
    tools={
        "delete_record": create_tool(
            id="delete-record",
            description="Delete a record by id",
            input_schema=RecordInput,
            execute=_delete,
            require_approval=True,
            idempotent=os.environ.get("FLEET_IDEMPOTENT") == "1",
        )
    },
)
