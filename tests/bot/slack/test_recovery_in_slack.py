"""After a crash between the claim and the tool's end, the restarted bot tells the thread."""

from __future__ import annotations

import json
from datetime import timedelta

from agents.models import call, reply
from bot.background._periodic import Background
from storage import ClaimRecord, Storage, utcnow
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI


async def test_a_call_claimed_by_a_crashed_instance_is_reported_interrupted_in_its_thread(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script = [
        call("delete_record", {"id": "9"}),
        lambda request: reply(request.messages[-1].content or ""),
    ]
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        [run] = (await bot.agent.list_suspended_runs()).runs
        call_id = run.tool_calls[0].tool_call_id
        # Another instance claimed the approval an hour ago and died before the tool finished.
        await store.claim(
            ClaimRecord(
                run_id=run.run_id,
                key=f"{call_id}#0",
                tool_call_id=call_id,
                decision="approved",
                decided_by="U2",
                decided_at=utcnow() - timedelta(hours=1),
            )
        )
        background = Background(bot.services).start()
        await bot.settle()
        await background.stop()
        assert executions.of("delete_record") == []  # never silently re-run
        told = json.loads(bot.texts(ts)[-1])
        assert told["status"] == "interrupted"
        [update] = [u for u in slack.calls_to("chat.update") if u.get("blocks")]
        assert update["blocks"][0]["text"]["text"].startswith("⚠️ Interrupted")
        assert not [b for b in update["blocks"] if b["type"] == "actions"]  # no live buttons
