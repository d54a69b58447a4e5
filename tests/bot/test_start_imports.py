"""Start-up imports what the configuration uses (issue 35): ``python -m bot`` with no OpenAI
model and no MCP server configured never imports ``openai`` nor the MCP SDK (``mcp``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.bot.bot_process import serve_bot_process

_UNSET = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "OPENAI_API_KEY")


def _imported(stderr: str) -> set[str]:
    """Every module ``-X importtime`` reported importing."""
    return {m.group(1) for m in re.finditer(r"^import time:.*\|\s+(\S+)$", stderr, re.M)}


@pytest.mark.processes
async def test_the_bot_without_a_model_or_mcp_server_never_imports_openai_nor_mcp(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in _UNSET and k != "BOT_AGENT"}
    env.update(
        MODEL="offline",
        GATEWAY="false",
        LOG_LEVEL="WARNING",
        STORAGE_URL=f"sqlite+aiosqlite:///{tmp_path / 'cs.db'}",
        PYTHONPROFILEIMPORTTIME="1",  # every import, while it starts, serves and stops
    )
    async with serve_bot_process(env, tmp_path) as bot:
        assert bot.health["mode"] == "local"
    imported = _imported(bot.stderr)

    assert bot.returncode == 0
    assert "bot._serve" in imported  # the start-up path was traced
    assert not {name for name in imported if name.split(".")[0] in ("openai", "mcp")}
