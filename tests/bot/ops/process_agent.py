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

from tests.bot.instance_agent import RecordInput, gated_ops_agent
from tools import ToolContext

warnings.warn("process_agent: an import-time warning", UserWarning, stacklevel=1)
logger = logging.getLogger("tests.process_agent")


async def _delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
    logger.warning("deleting a record")
    gate = os.environ.get("TOOL_GATE_DIR")
    if gate:
        (Path(gate) / "started").touch()
        while not (Path(gate) / "release").exists():  # noqa: ASYNC110 - another process releases
            await asyncio.sleep(0.02)
    return {"deleted": input.id}


agent = gated_ops_agent(_delete)
