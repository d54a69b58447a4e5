"""A quorum card in Slack: progress while it waits, every approver named in order once the
quorum is met (SPEC 12); the self-approval hint follows the policy in force."""

from __future__ import annotations

import json
from pathlib import Path

from agents.models import call, reply
from bot.slack._ids import APPROVE_ACTION
from bot.slack.blocks._card import NOT_SELF_BLOCK
from storage import Storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI


def _policy(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "countersign.toml"
    path.write_text(text, encoding="utf-8")
    return {"POLICY_FILE": str(path)}


def _context(blocks: list[dict[str, object]]) -> str:
    return json.dumps([b for b in blocks if b["type"] == "context"])


async def test_an_approved_quorum_card_names_every_approver_in_order(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    env = _policy(tmp_path, '[[rules]]\ntools = ["delete-*"]\napprovals = 3\n')
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        for user in ("U3", "U2", "U4"):
            await bot.click(card, APPROVE_ACTION, user=user)
            await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]
        final = bot.slack.messages[card.ts]
        text = json.dumps(final.blocks)
        assert final.blocks[0]["text"]["text"].startswith("✅ Approved")
        assert "Approved by <@U3>, <@U2> and <@U4>" in text and "3 of 3 approvals" in text
        assert "Approved by U3, U2 and U4" in final.text
        assert not any(b["type"] == "actions" for b in final.blocks)


async def test_the_self_approval_hint_follows_the_policy_in_force(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    text = (
        "[defaults]\nallow_self_approval = false\n\n"
        '[[rules]]\ntools = ["delete-*"]\nallow_self_approval = true\n'
    )
    agent, _ = make_agent([call("delete_record", {"id": "7"})], executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, text)) as bot:
        allowed = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        [card] = bot.cards(allowed)
        assert "who asked for it" not in _context(card.blocks)
        assert "not the requester" not in _context(card.blocks)
        assert NOT_SELF_BLOCK not in json.dumps(card.blocks)  # nothing for a client to hint
    env = {"ALLOW_SELF_APPROVAL": "false"}
    agent, _ = make_agent([call("delete_record", {"id": "8"})], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        refused = await bot.mention("delete record 8", user="U1")
        await bot.settle()
        [card] = bot.cards(refused)
        assert "(not <@U1>, who asked for it)" in _context(card.blocks)
        [context] = [b for b in card.blocks if "Requested by" in json.dumps(b)]
        assert context["block_id"] == NOT_SELF_BLOCK
