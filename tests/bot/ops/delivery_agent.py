"""The agent two ``python -m bot`` processes serve in the delivery tests (``BOT_AGENT``).

"delete record r1" → a gated ``delete_record`` call on ``r1`` (idempotent with
``FLEET_IDEMPOTENT=1``); once the result is in, the model answers ``Deleted r1.`` or ``Not
done: <status>.``. The test holds each stage on files in ``$GATE_DIR``:

- ``hold-<id>``: the tool writes ``started-<id>-<pid>`` as it starts and waits for
  ``release-<id>``;
- ``hold-answer``: the model, asked for the answer after the result, writes
  ``answering-<pid>`` and waits for ``release-answer`` before it says anything.

Every execution appends ``<id> <pid>`` to ``$EXECUTIONS_FILE`` when it finishes.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelEvent, ModelRequest, TextDelta, ToolCallRequest, Usage
from tools import ToolContext, create_tool


class RecordInput(BaseModel):
    id: str


def _gate() -> Path:
    return Path(os.environ["GATE_DIR"])


async def _wait_for(path: Path) -> None:
    while not os.path.exists(path):  # noqa: ASYNC110, ASYNC240 - the test releases it
        await asyncio.sleep(0.02)


async def _delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
    gate = _gate()
    if (gate / f"hold-{input.id}").exists():
        (gate / f"started-{input.id}-{os.getpid()}").touch()
        await _wait_for(gate / f"release-{input.id}")
    with open(os.environ["EXECUTIONS_FILE"], "a", encoding="utf-8") as log:  # noqa: ASYNC230
        log.write(f"{input.id} {os.getpid()}\n")
    return {"deleted": input.id}


class GatedModel:
    """Calls ``delete_record`` for the record named; answers once the result is in, held
    while ``hold-answer`` exists."""

    @property
    def model_id(self) -> str:
        return "gated"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        if last.role == "tool":
            gate = _gate()
            if (gate / "hold-answer").exists():
                (gate / f"answering-{os.getpid()}").touch()
                await _wait_for(gate / "release-answer")
            result = json.loads(last.content or "{}")
            if "deleted" in result:
                yield TextDelta(f"Deleted {result['deleted']}.")
            else:
                yield TextDelta(f"Not done: {result.get('status', 'error')}.")
        else:
            user = next(m for m in reversed(request.messages) if m.role == "user")
            record = (user.content or "").split()[-1]
            yield ToolCallRequest(f"call-{record}", "delete_record", {"id": record})
        yield Usage()


agent = Agent(
    id="ops",
    model=GatedModel(),
    tools={
        "delete_record": create_tool(
            id="delete-record",
            title="Delete a record",
            description="Delete a record by id",
            input_schema=RecordInput,
            execute=_delete,
            require_approval=True,
            idempotent=os.environ.get("FLEET_IDEMPOTENT") == "1",
        )
    },
)
