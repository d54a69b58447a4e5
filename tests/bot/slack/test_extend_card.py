"""SPEC 12 round 4: a pending card whose rule allows more time shows "Extend" to those who may
approve it: a click moves the call's ``expires_at`` (audited) and redraws the card with the new
expiry; anyone else gets a private note and nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import bot.slack._messages as msg
from agents.models import call, reply
from bot.slack._ids import EXTEND_ACTION
from storage import Storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

POLICY = """
[[rules]]
tools = ["delete-*"]
approvers = ["U9"]
ttl_seconds = 3600
max_ttl_seconds = 7200
"""


def _buttons(blocks: list[dict[str, object]]) -> list[object]:
    return [
        e["action_id"]
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]  # type: ignore[attr-defined]
    ]


async def test_an_approver_extends_from_the_card_and_it_is_redrawn_with_the_new_expiry(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(POLICY, encoding="utf-8")
    agent, _ = make_agent([call("delete_record", {"id": "x"}), reply("Deleted.")], executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert EXTEND_ACTION in _buttons(card.blocks)
        [run] = (await bot.agent.list_suspended_runs()).runs
        [shown] = run.tool_calls
        assert shown.expires_at is not None

        await bot.click(card, EXTEND_ACTION, user="U2")  # may not approve: may not extend
        await bot.settle()
        [refusal] = slack.calls_to("chat.postEphemeral")
        assert refusal["user"] == "U2"
        assert bot.updates_of(card.ts) == []
        same = await bot.agent.pending_call(run_id=run.run_id, tool_call_id=shown.tool_call_id)
        assert same is not None and same.expires_at == shown.expires_at

        await bot.click(card, EXTEND_ACTION, user="U9")
        await bot.settle()
        [moved] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert moved.expires_at is not None and moved.expires_at > shown.expires_at
        [update] = bot.updates_of(card.ts)
        redrawn = json.dumps(update.args["blocks"])
        assert f"|{moved.expires_at.isoformat()}>" in redrawn
        assert f"|{shown.expires_at.isoformat()}>" not in redrawn
        assert EXTEND_ACTION in _buttons(update.args["blocks"])  # still pending, still extendable
        told = slack.calls_to("chat.postEphemeral")[-1]
        assert told["user"] == "U9" and "Extended" in told["text"]
        events = await store.query_audit()
        [extended] = [e for e in events if e.kind == "extended"]
        assert (extended.actor, extended.source) == ("U9", "button")


async def test_a_card_whose_rule_allows_no_more_time_has_no_extend_button(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "x"}), reply("Deleted.")], executions)
    async with start_bot(slack, agent, store, env={"APPROVAL_TTL_SECONDS": "3600"}) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert EXTEND_ACTION not in _buttons(card.blocks)
        assert msg.EXTEND_BUTTON not in json.dumps(card.blocks)
