"""SPEC 12 batch cards: every call listed on one line with its arguments and its own ⋯ menu,
"Approve all N" / "Decline all N" at the top, outcomes per row, readable with 10 calls and
within Slack's limits (checked by slack_sdk's own models) with 20."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from agents import Approve, Decline
from bot.policy._card_rules import CardRules
from bot.slack._ids import APPROVE_ALL_ACTION, DECLINE_ALL_ACTION, ROW_ACTION, WITHDRAW_ACTION
from bot.slack.blocks._batch_card import (
    MAX_BATCH_CALLS,
    BatchRow,
    RowChoice,
    batch_card,
    batch_fallback,
)
from bot.slack.blocks._blocks import as_dicts
from bot.slack.blocks._card import CardView, Decided
from bot.slack.blocks._refs import ApprovalRef

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _view(n: int, args: dict[str, Any], **fields: Any) -> CardView:
    return CardView(
        ref=ApprovalRef(run_id="run-1", tool_call_id=f"call_{n}", fingerprint="f" * 64),
        tool_name="delete_record",
        args=args,
        requester="U1",
        **fields,
    )


def _actions(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def _menus(blocks: list[dict[str, Any]]) -> list[list[str]]:
    """Each row menu's options, as the kind each decides."""
    return [
        [json.loads(o["value"])["k"] for o in b["accessory"]["options"]]
        for b in blocks
        if b.get("accessory", {}).get("action_id") == ROW_ACTION
    ]


def _buttons(blocks: list[dict[str, Any]]) -> int:
    """Every button and menu a person sees on the card."""
    return len(_actions(blocks)) + len(_menus(blocks))


def _validated(blocks: list[Block]) -> list[dict[str, Any]]:
    dicts = as_dicts(blocks)  # slack_sdk raises on any limit
    assert len(dicts) <= 50
    assert len({b["block_id"] for b in dicts if "block_id" in b}) == len(
        [b for b in dicts if "block_id" in b]
    )
    for block in dicts:
        text = block.get("text", {}).get("text", "")
        assert len(text) <= (150 if block["type"] == "header" else 3000)
    return dicts


def test_every_call_is_one_line_with_its_menu_under_approve_all() -> None:
    rows = [BatchRow(view=_view(n, {"id": str(n)})) for n in (3, 4, 5)]

    blocks = _validated(batch_card(rows))

    assert blocks[0]["text"]["text"] == "Approve 3 calls?"
    assert _actions(blocks) == [APPROVE_ALL_ACTION, DECLINE_ALL_ACTION]  # right under it
    assert [b["type"] for b in blocks[:3]] == ["header", "context", "actions"]
    labels = [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels == ["Approve all 3", "Decline all 3"]
    rows_text = [b["text"]["text"] for b in blocks if b.get("accessory")]
    assert rows_text == [f"*{n - 2}. delete_record* · *id* `{n}`" for n in (3, 4, 5)]  # one line
    assert _menus(blocks) == [["approve", "edit", "decline", "withdraw"]] * 3
    values = [
        RowChoice.decode(o["value"])
        for b in blocks
        if b.get("accessory")
        for o in b["accessory"]["options"]
    ]
    assert {v.tool_call_id for v in values if v} == {"call_3", "call_4", "call_5"}
    assert WITHDRAW_ACTION not in _actions(blocks)  # a menu item, not a button on every row
    assert batch_fallback(rows).startswith("Approval needed for 3 calls")


def test_ten_calls_stay_readable_with_two_buttons_and_ten_menus() -> None:
    rows = [
        BatchRow(view=_view(n, {"id": str(n), "reason": "cleanup"}, expires_at=AT))
        for n in range(10)
    ]

    blocks = _validated(batch_card(rows))

    assert _buttons(blocks) == 2 + 10  # was 4 buttons a row (42 with Approve all)
    assert len(blocks) == 3 + 10 + 1
    context = json.dumps(blocks[1])
    assert "may approve" in context and "Expires" in context  # said once, for all ten
    rows_text = [b["text"]["text"] for b in blocks if b.get("accessory")]
    assert all("\n" not in t and "Expires" not in t for t in rows_text)
    assert rows_text[9] == "*10. delete_record* · *id* `9` · *reason* `cleanup`"


def test_a_row_whose_rule_differs_says_so_on_its_own_line() -> None:
    quorum = CardRules(approvals_required=2)
    rows = [
        BatchRow(view=_view(1, {"id": "1"})),
        BatchRow(view=_view(2, {"id": "2"}, rules=quorum)),
    ]

    blocks = _validated(batch_card(rows))

    rows_text = [b["text"]["text"] for b in blocks if b.get("accessory")]
    assert "0 of 2 approvals" not in rows_text[0]
    assert rows_text[1].endswith("0 of 2 approvals")


def test_a_confirm_rule_asks_before_the_rows_choice_and_grants_are_offered() -> None:
    rows = [
        BatchRow(view=_view(1, {"id": "1"}, rules=CardRules(confirm=True), grantable=True)),
        BatchRow(view=_view(2, {"id": "2"})),
    ]

    blocks = _validated(batch_card(rows))

    first, second = (b["accessory"] for b in blocks if b.get("accessory"))
    assert first["confirm"]["title"]["text"] == "Are you sure?"
    assert "confirm" not in second
    assert [json.loads(o["value"])["k"] for o in first["options"]] == [
        "approve",
        "grant",
        "edit",
        "decline",
        "withdraw",
    ]


def test_a_row_whose_ids_do_not_fit_a_menu_option_has_no_menu() -> None:
    long_id = "call_" + "x" * 120
    view = CardView(
        ref=ApprovalRef(run_id="run-1", tool_call_id=long_id, fingerprint="f" * 64),
        tool_name="delete_record",
        args={"id": "1"},
        requester="U1",
    )
    blocks = _validated(batch_card([BatchRow(view=view), BatchRow(view=_view(2, {"id": "2"}))]))
    assert len(_menus(blocks)) == 1
    assert _actions(blocks) == [APPROVE_ALL_ACTION, DECLINE_ALL_ACTION]


def test_twenty_calls_with_long_values_fit_slacks_limits_and_cut_values_have_show_all() -> None:
    long = {"id": "x" * 5000, "note": "é" * 3000, "nested": {"k": ["v" * 400] * 10}}
    rows = [
        BatchRow(view=_view(n, long, rules=CardRules(approvals_required=2), expires_at=AT))
        for n in range(MAX_BATCH_CALLS)
    ]

    blocks = _validated(batch_card(rows))

    assert len(blocks) == 3 + MAX_BATCH_CALLS + 1
    text_total = sum(len(b.get("text", {}).get("text", "")) for b in blocks)
    assert text_total < 13_000  # Slack's undocumented whole-message limit
    assert [m[-1] for m in _menus(blocks)] == ["show-all"] * MAX_BATCH_CALLS
    assert json.dumps(blocks).count("0 of 2 approvals") == 1  # shared: said once
    with pytest.raises(ValueError):
        batch_card(rows + rows[:1])


def test_decided_rows_show_their_outcome_and_all_decided_leaves_no_live_button() -> None:
    views = [_view(n, {"id": str(n)}) for n in (1, 2, 3)]
    approved = Decided(decision=Approve(), by="U2", at=AT)
    declined = Decided(decision=Decline(reason="keep it"), by="U3", at=AT)

    partly = _validated(
        batch_card(
            [
                BatchRow(view=views[0], decided=approved),
                BatchRow(view=views[1]),
                BatchRow(view=views[2]),
            ]
        )
    )

    assert len(_menus(partly)) == 2
    labels = [e["text"]["text"] for b in partly if b["type"] == "actions" for e in b["elements"]]
    assert "Approve all 2" in labels
    assert "Approved by <@U2>" in json.dumps(partly)

    done = _validated(
        batch_card(
            [
                BatchRow(view=views[0], decided=approved),
                BatchRow(view=views[1], decided=declined),
                BatchRow(view=views[2], decided=approved),
            ]
        )
    )
    assert _actions(done) == [] and _menus(done) == []
    assert done[0]["text"]["text"] == "All 3 calls decided"
    assert "keep it" in json.dumps(done)
