"""SPEC 12 batch cards: every call listed with its own buttons, "Approve all N" / "Decline all
N", outcomes per row, within Slack's limits (checked by slack_sdk's own models) with 20 calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from agents import Approve, Decline
from bot.policy._card_rules import CardRules
from bot.slack._ids import (
    APPROVE_ACTION,
    APPROVE_ALL_ACTION,
    DECLINE_ACTION,
    DECLINE_ALL_ACTION,
    EDIT_ACTION,
    SHOW_ALL_ACTION,
)
from bot.slack.blocks._batch_card import MAX_BATCH_CALLS, BatchRow, batch_card, batch_fallback
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


def test_every_call_is_listed_with_its_own_buttons_and_approve_all() -> None:
    rows = [BatchRow(view=_view(n, {"id": str(n)})) for n in (3, 4, 5)]

    blocks = _validated(batch_card(rows))

    text = json.dumps(blocks)
    assert blocks[0]["text"]["text"] == "Approve 3 calls?"
    for n in (3, 4, 5):
        assert f"`{n}`" in text and f"call_{n}" in text
    actions = _actions(blocks)
    assert actions.count(APPROVE_ACTION) == 3 and actions.count(DECLINE_ACTION) == 3
    assert actions.count(EDIT_ACTION) == 3
    assert actions[-2:] == [APPROVE_ALL_ACTION, DECLINE_ALL_ACTION]
    labels = [e["text"]["text"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert "Approve all 3" in labels and "Decline all 3" in labels
    assert batch_fallback(rows).startswith("Approval needed for 3 calls")


def test_twenty_calls_with_long_values_fit_slacks_limits_and_cut_values_have_show_all() -> None:
    long = {"id": "x" * 5000, "note": "é" * 3000, "nested": {"k": ["v" * 400] * 10}}
    rows = [
        BatchRow(view=_view(n, long, rules=CardRules(approvals_required=2), expires_at=AT))
        for n in range(MAX_BATCH_CALLS)
    ]

    blocks = _validated(batch_card(rows))

    assert len(blocks) == 2 + 2 * MAX_BATCH_CALLS + 1
    text_total = sum(len(b.get("text", {}).get("text", "")) for b in blocks)
    assert text_total < 13_000  # Slack's undocumented whole-message limit
    assert _actions(blocks).count(SHOW_ALL_ACTION) == MAX_BATCH_CALLS
    assert json.dumps(blocks).count("0 of 2 approvals") == MAX_BATCH_CALLS
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

    actions = _actions(partly)
    assert actions.count(APPROVE_ACTION) == 2
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
    assert _actions(done) == []
    assert done[0]["text"]["text"] == "All 3 calls decided"
    assert "keep it" in json.dumps(done)
