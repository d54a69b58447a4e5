"""Grant metrics (SPEC 15): ``countersign_grants_active`` read from storage at scrape time and
``countersign_grant_uses_total``, with no argument value in any label."""

from __future__ import annotations

from pathlib import Path

from agents import Approve, GrantRequest
from agents.models import call, reply
from storage import Storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.bot.ops.test_metrics import _decided, _scrape
from tests.fakes.slack_api import FakeSlackAPI

POLICY = """
[[rules]]
tools = ["delete-record"]
grants = { max_seconds = 3600, max_uses = 5 }
"""


async def test_active_grants_and_their_uses_are_counted_without_argument_values(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(POLICY, encoding="utf-8")
    gated = [call("delete_record", {"id": "secret-record-7"}), reply("Deleted.")]
    agent, _ = make_agent(gated * 2, executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        ts = await bot.mention("delete it", user="U1")
        await bot.settle()
        _, before = await _scrape(bot)
        [run] = (await bot.agent.list_suspended_runs()).runs
        stream = await bot.agent.decide(
            Approve(grant=GrantRequest(seconds=600, max_uses=5)),
            run_id=run.run_id,
            decided_by="U2",
        )
        await stream.result()
        await bot.mention("delete it again", user="U1", thread_ts=ts)
        await bot.settle()
        text, after = await _scrape(bot)

    assert before[("countersign_grants_active", ())] == 0
    assert after[("countersign_grants_active", ())] == 1
    assert after[("countersign_grant_uses_total", (("tool", "delete_record"),))] == 1
    assert after[_decided("approved", "grant")] == 1
    assert len(executions.of("delete_record")) == 2
    assert "secret-record-7" not in text
