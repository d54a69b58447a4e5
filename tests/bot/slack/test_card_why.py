"""SPEC 12 round 4, the builders: every card says why its call waits and under which rule (the
rule's words, its file and number, the quorum and approvers by mention), a decided card says
why it waited, a batch card says it once when the calls share it and per row otherwise, and
an edited proposal says who changed what from what and that a stricter rule now applies;
all of it valid for slack_sdk's models and within Slack's limits under hostile text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import Block

from agents import Decline
from bot.policy._card_rules import CardRules
from bot.slack.blocks._batch_card import MAX_BATCH_CALLS, BatchRow, batch_card
from bot.slack.blocks._blocks import as_dicts
from bot.slack.blocks._card import WHY_BLOCK, CardView, Decided, approval_card
from bot.slack.blocks._decided_card import decided_card
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks._why import Why

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REFUNDS = Why(
    reasons=("refund's own rule asks for approval of these arguments",),
    rule_number=2,
    rule_source="countersign.toml",
    rule_text="Refunds over 1,000",
)
NASTY = "<!channel> & <@U999> *bold* " * 40


def _view(n: int = 1, **fields: Any) -> CardView:
    defaults: dict[str, Any] = {
        "ref": ApprovalRef(run_id="run-1", tool_call_id=f"call_{n}", fingerprint="f" * 64),
        "tool_name": "refund",
        "args": {"order": 49, "amount": 1150},
        "requester": "U1",
    }
    return CardView(**(defaults | fields))


def _valid(blocks: list[Block]) -> list[dict[str, Any]]:
    """Each block re-parsed and validated by slack_sdk; Slack's whole-message text limit."""
    dicts = as_dicts(blocks)
    assert len(dicts) <= 50
    for raw in dicts:
        parsed = Block.parse(raw)
        assert parsed is not None
        parsed.validate_json()
    assert sum(len(json.dumps(_texts(raw), ensure_ascii=False)) for raw in dicts) < 13_000
    return dicts


def _texts(raw: dict[str, Any]) -> list[str]:
    texts = [raw.get("text", {}).get("text", "")]
    texts += [f["text"] for f in raw.get("fields") or []]
    return texts + [e.get("text", "") for e in raw.get("elements") or [] if "type" in e]


def _why(blocks: list[dict[str, Any]]) -> str:
    [line] = [b for b in blocks if b.get("block_id") == WHY_BLOCK]
    return str(line["elements"][0]["text"])


def test_a_card_says_why_under_which_rule_with_its_quorum_and_approvers() -> None:
    rules = CardRules(approvers=("S0FINANCE",), approvals_required=2)
    blocks = _valid(approval_card(_view(why=REFUNDS, rules=rules)))

    why = _why(blocks)
    assert why.startswith(":information_source: *Why it waits:* refund's own rule asks")
    rule = "Refunds over 1,000 (rule 2 of countersign.toml): 2 approvals from <!subteam^S0FINANCE>"
    assert rule in why


def test_a_rule_that_held_the_call_is_said_once() -> None:
    held_by_rule = Why(
        reasons=("delete-* · rule 1 of countersign.toml",),
        rule_number=1,
        rule_source="countersign.toml",
        rule_text="delete-*",
    )
    why = _why(_valid(approval_card(_view(why=held_by_rule))))
    assert why.count("rule 1 of countersign.toml") == 1
    assert why.endswith("delete-* (rule 1 of countersign.toml)")


def test_an_mcp_call_says_which_annotation_held_it() -> None:
    mcp = Why(reasons=("Destructive MCP tool (no readOnlyHint)",))
    assert "Destructive MCP tool (no readOnlyHint)" in _why(_valid(approval_card(_view(why=mcp))))


def test_a_call_without_a_recorded_reason_has_no_why_line() -> None:
    blocks = _valid(approval_card(_view()))
    assert not [b for b in blocks if b.get("block_id") == WHY_BLOCK]


def test_hostile_rule_words_are_escaped_and_cut_to_fit() -> None:
    hostile = Why(reasons=(NASTY,) * 10, rule_number=3, rule_text=NASTY)
    why = _why(_valid(approval_card(_view(why=hostile))))
    assert "<!channel>" not in why and "<@U999>" not in why
    assert len(why) <= 1500


def test_a_decided_card_says_why_it_waited() -> None:
    decided = Decided(decision=Decline(reason="no"), by="U2", at=AT)
    blocks = _valid(decided_card(_view(why=REFUNDS), decided))
    assert _why(blocks).startswith(":information_source: *Why it waited:* ")
    assert "rule 2 of countersign.toml" in _why(blocks)


def test_a_batch_says_a_shared_why_once_and_a_different_one_on_its_row() -> None:
    mcp = Why(reasons=("Destructive MCP tool (no readOnlyHint)",))
    rows = [BatchRow(view=_view(n, why=REFUNDS)) for n in (1, 2)]
    rows.append(BatchRow(view=_view(3, why=mcp)))
    blocks = _valid(batch_card(rows))

    text = json.dumps(blocks)
    assert text.count("Refunds over 1,000 (rule 2 of countersign.toml)") == 2  # rows 1 and 2
    row3 = next(b for b in blocks if b.get("block_id", "").endswith(":3"))
    assert "Destructive MCP tool" in row3["text"]["text"]
    same = batch_card([BatchRow(view=_view(n, why=REFUNDS)) for n in (1, 2, 3)])
    assert json.dumps(_valid(same)).count("Refunds over 1,000") == 1  # on the shared line


def test_twenty_rows_each_with_its_own_long_why_fit_slacks_limits() -> None:
    rows = [
        BatchRow(view=_view(n, args={"id": "x" * 3000}, why=Why(reasons=(f"{n} " + NASTY,))))
        for n in range(MAX_BATCH_CALLS)
    ]
    blocks = _valid(batch_card(rows))
    assert sum(len(b.get("text", {}).get("text", "")) for b in blocks) < 13_000
    assert all("Why it waits" in b["text"]["text"] for b in blocks if b["type"] == "section")


def test_an_edited_proposal_names_the_editor_the_change_and_the_stricter_rule() -> None:
    edited = _view(why=REFUNDS, edited_from={"order": 49, "amount": 300}, edited_by="U2")
    blocks = _valid(approval_card(edited))
    text = json.dumps(blocks, ensure_ascii=False)

    assert "<@U2> changed amount `300` → `1150`" in text
    assert "rule 2 of countersign.toml now applies" in text
    assert "Requested by <@U1>" in text  # the original requester stays


def test_an_edit_of_many_arguments_stays_short_and_escaped() -> None:
    before = {f"k{i}": NASTY for i in range(30)}
    after = {f"k{i}": "x" * 500 for i in range(30)}
    blocks = _valid(approval_card(_view(args=after, edited_from=before, edited_by=None)))
    [line] = [b for b in blocks if "changed" in b.get("text", {}).get("text", "")]
    assert "and 25 more" in line["text"]["text"] and "<!channel>" not in line["text"]["text"]
