"""SPEC 12 round 4 in Slack: the card a mention posts says why its call waits and under which
rule of which file (its words, the quorum, the approvers' group), the card once decided still
says it, and an edited proposal's new card names the editor, what changed from what, the
stricter rule now in force and the original requester."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.models import call, reply
from bot.slack._ids import APPROVE_ACTION
from storage import Storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.bot.slack.test_binding_in_slack import ALEX, SAM, _card, _edit, _env, _ops
from tests.fakes.slack_api import FakeSlackAPI

RULE = (
    '[[rules]]\ntools = ["delete-*"]\ndescription = "Deleting records needs two of finance"\n'
    'approvals = 2\napprovers = ["S1"]\n'
)


def _text(blocks: Any) -> str:
    return json.dumps(blocks, ensure_ascii=False)


async def test_a_card_says_why_it_waits_under_which_rule_and_still_says_it_once_decided(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(RULE, encoding="utf-8")
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        slack.usergroups["S1"] = ["U6", "U7"]
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        shown = _text(card.blocks)
        assert "*Why it waits:* delete-record always needs approval" in shown
        assert (
            "Deleting records needs two of finance (rule 1 of countersign.toml): "
            "2 approvals from <!subteam^S1>"
        ) in shown

        await bot.click(card, APPROVE_ACTION, user="U6")
        await bot.settle()
        await bot.click(card, APPROVE_ACTION, user="U7")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]
        decided = _text(bot.updates_of(card.ts)[-1]["blocks"])
        assert "Approved" in decided and "*Why it waited:*" in decided
        assert "rule 1 of countersign.toml" in decided


async def test_an_edited_proposals_card_names_the_editor_the_change_and_the_stricter_rule(
    slack: FakeSlackAPI, store: Storage
) -> None:
    refunds: list[dict[str, Any]] = []
    async with start_bot(slack, _ops(refunds), store, env=_env()) as bot:
        ts, card = await _card(bot)
        assert "changed" not in _text(card.blocks)
        await _edit(bot, card, "1150", user=SAM)

        _, new = bot.cards(ts)
        shown = _text(new.blocks)
        assert f"<@{SAM}> changed amount `300` → `1150`" in shown
        assert "rule 1 of countersign.toml now applies" in shown
        assert f"Requested by <@{ALEX}>" in shown  # alex asked; sam's edit is said as sam's
        assert "refund of ops/billing when amount is above 1,000 (rule 1 of countersign.toml)" in (
            shown
        )
