"""MCP tools in Slack (SPEC 14): mention → a card naming the server → approve → the stdio MCP
server executed the call exactly once; policy rules only ever add approval to MCP tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from agents import Agent
from agents.models import ScriptedModel, ScriptItem, call, reply
from bot import load_settings
from bot._mcp_servers import mcp_servers
from bot.slack._ids import APPROVE_ACTION
from storage import Storage
from tests.bot.harness import SECRET, Bot, start_bot
from tests.bot.test_mcp_servers import ops_entry
from tests.fakes.slack_api import FakeSlackAPI
from tests.tools.conftest import calls

pytestmark = pytest.mark.processes


@asynccontextmanager
async def mcp_bot(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path, script: list[ScriptItem], rules: str = ""
) -> AsyncIterator[Bot]:
    """The bot serving an agent whose only tools come from the policy file's ``ops`` server."""
    policy = tmp_path / "countersign.toml"
    policy.write_text(rules + ops_entry(), encoding="utf-8")
    env = {"POLICY_FILE": str(policy), "OPS_LOG": str(tmp_path / "calls.log"), "WHO": "ops"}
    slack_env = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET}
    settings = load_settings({**slack_env, **env})
    agent = Agent(id="ops", name="Ops", model=ScriptedModel(script))
    async with (
        mcp_servers(settings.policy.mcp_servers, settings.mcp_environ) as mcp,
        start_bot(slack, agent, store, env=env, tools=mcp.tools) as bot,
    ):
        yield bot


async def test_mention_card_names_the_server_and_approval_runs_the_mcp_tool_once(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    script = [call("ops_delete_ticket", {"ticket_id": "T-7"}), reply("Deleted T-7.")]
    async with mcp_bot(slack, store, tmp_path, script) as bot:
        ts = await bot.mention("delete ticket T-7", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        shown = str(card.blocks)
        assert "ops · delete_ticket" in shown and "destructive" in shown
        assert "Why it waits:* Destructive MCP tool (no readOnlyHint)" in shown  # SPEC 12
        assert calls(tmp_path / "calls.log") == []
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        await bot.click(card, APPROVE_ACTION, user="U3")  # a late second click runs nothing
        await bot.settle()
        assert bot.texts(ts)[-1] == "Deleted T-7."
    assert calls(tmp_path / "calls.log") == ["delete_ticket T-7"]


async def test_a_rule_can_require_approval_for_a_read_only_mcp_tool(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    rules = '[[rules]]\ntools = ["ops_read_*"]\nrequire_approval = true\n\n'
    script = [call("ops_read_ticket", {"ticket_id": "T-1"}), reply("Open.")]
    async with mcp_bot(slack, store, tmp_path, script, rules) as bot:
        assert bot.services.agent.tools["ops_read_ticket"].require_approval is False
        ts = await bot.mention("read ticket T-1")
        await bot.settle()
        assert len(bot.cards(ts)) == 1
        [pending] = (await bot.services.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.requires_approval
    assert calls(tmp_path / "calls.log") == []


async def test_require_approval_false_never_removes_an_mcp_tools_own_approval(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    rules = '[[rules]]\ntools = ["ops_*"]\nrequire_approval = false\n\n'
    script = [call("ops_plain_write", {"value": 3}), reply("Wrote.")]
    async with mcp_bot(slack, store, tmp_path, script, rules) as bot:
        ts = await bot.mention("write 3")
        await bot.settle()
        assert len(bot.cards(ts)) == 1
        [pending] = (await bot.services.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.requires_approval
    assert calls(tmp_path / "calls.log") == []
