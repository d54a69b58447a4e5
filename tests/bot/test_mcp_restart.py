"""A run suspended on an MCP tool call resumes after the bot restarts (SPEC 14): two
generations of agent + ``[[mcp_servers]]`` on the same SQLite file, the second with a fresh
server process. The pending call keeps its arguments and fingerprint; approving it after the
restart executes it exactly once on the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents import Agent, AlreadyDecided, ServedParts, fingerprint
from agents.models import ScriptedModel, ScriptItem, call, reply
from bot._mcp_servers import mcp_servers
from storage import Storage, create_storage
from tests.bot.test_mcp_servers import ops_entry, settings_with
from tests.tools.conftest import calls

pytestmark = pytest.mark.processes


async def test_a_pending_mcp_call_is_approved_after_a_restart_and_runs_once(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.log"
    settings = settings_with(tmp_path, ops_entry(), OPS_LOG=str(log), WHO="x")
    url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    args = {"ticket_id": "T-9", "reason": "dup"}

    async def generation(script: list[ScriptItem]) -> tuple[Agent, Storage]:
        storage = create_storage(url)
        agent = Agent(id="ops", model=ScriptedModel(script), storage=storage)
        return agent, storage

    given, storage = await generation([call("ops_delete_ticket", args), reply("never")])
    async with mcp_servers(settings.policy.mcp_servers, settings.mcp_environ) as mcp:
        first = given.served(ServedParts(tools=mcp.tools))
        paused = await first.generate("delete T-9")
        assert paused.finish_reason == "suspended"
    await storage.close()
    assert calls(log) == []

    given, storage = await generation([reply("Deleted T-9.")])
    async with mcp_servers(settings.policy.mcp_servers, settings.mcp_environ) as mcp:
        second = given.served(ServedParts(tools=mcp.tools))
        [run] = (await second.list_suspended_runs()).runs
        [pending] = run.tool_calls
        assert pending.tool_name == "ops_delete_ticket" and pending.args == args
        assert pending.fingerprint == paused.pending[0].fingerprint
        assert pending.fingerprint == fingerprint("ops_delete_ticket", args)
        done = await second.approve_tool_call_generate(
            run_id=run.run_id, tool_call_id=pending.tool_call_id
        )
        assert done.finish_reason == "stop" and done.text == "Deleted T-9."
        with pytest.raises(AlreadyDecided):
            await second.approve_tool_call(run_id=run.run_id, tool_call_id=pending.tool_call_id)
    await storage.close()
    assert calls(log) == ["delete_ticket T-9"]
