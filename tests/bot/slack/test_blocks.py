"""Block Kit rendering: escaped, truncated entity-safe, within every limit."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from agents import Approve, Decline, Expire
from bot import APPROVE_ACTION, DECLINE_ACTION
from bot.slack._ids import EDIT_ACTION, WITHDRAW_ACTION
from bot.slack.blocks._blocks import (
    CardView,
    Decided,
    already_decided_text,
    answer_text,
    approval_card,
    as_dicts,
    decided_card,
    question_blocks,
)
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated, truncate_escaped
from bot.slack.blocks._refs import ApprovalRef

REF = ApprovalRef(run_id="r" * 32, tool_call_id="call_1", fingerprint="f" * 64)
NASTY = "<!channel> <@U999> <https://evil.example|innocent> & ``` done"


def _card(**kw: object) -> CardView:
    defaults: dict[str, object] = {"ref": REF, "tool_name": "delete_record", "args": {"id": "a"}}
    return CardView(**(defaults | kw))  # type: ignore[arg-type]


def _texts(blocks: list[dict]) -> str:
    return json.dumps(blocks)


def _no_broken_entities(text: str) -> bool:
    return all(m in ("&amp;", "&lt;", "&gt;") for m in re.findall(r"&[a-z]*;?", text))


def test_escape_neutralises_slack_control_characters() -> None:
    assert escape("a & <b> <!here>") == "a &amp; &lt;b&gt; &lt;!here&gt;"


@pytest.mark.parametrize("limit", range(2, 40))
def test_truncation_never_breaks_an_entity(limit: int) -> None:
    text = truncate_escaped(escape("<<&&>>" * 10), limit)
    assert len(text) <= limit
    assert _no_broken_entities(text)


def test_short_text_is_untouched() -> None:
    assert escape_truncated("hello", 10) == "hello"


def test_code_block_fits_and_cannot_be_closed_early() -> None:
    block = code_block("x```y" + "z" * 5000, 300)
    assert len(block) <= 300
    assert block.startswith("```") and block.endswith("```")
    assert block[3:-3].count("```") == 0


def test_approval_card_has_the_spec_buttons_and_an_opaque_value() -> None:
    blocks = as_dicts(approval_card(_card()))
    [actions] = [b for b in blocks if b["type"] == "actions"]
    approve, edit, decline, withdraw = actions["elements"]
    assert (approve["action_id"], approve["style"]) == (APPROVE_ACTION, "primary")
    assert (edit["action_id"], "style" in edit) == (EDIT_ACTION, False)
    assert (decline["action_id"], decline["style"]) == (DECLINE_ACTION, "danger")
    assert (withdraw["action_id"], "style" in withdraw) == (WITHDRAW_ACTION, False)
    assert ApprovalRef.decode(approve["value"]) == REF
    assert len(approve["value"]) <= 2000


def test_untrusted_arguments_are_escaped_and_fit_the_limits() -> None:
    args = {"id": NASTY, "note": NASTY * 500, NASTY: [NASTY] * 50}
    blocks = as_dicts(
        approval_card(_card(tool_name=NASTY * 10, args=args, agent_path=("a", NASTY)))
    )
    text = _texts([b for b in blocks if b["type"] != "header"])  # plain_text: never parsed
    for raw in ("<!channel>", "<@U999>", "<https://evil"):
        assert raw not in text
    for block in blocks:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000
            assert _no_broken_entities(block["text"]["text"])
    assert len(blocks) <= 50


def test_requester_is_mentioned_only_when_it_is_a_user_id() -> None:
    assert "<@U1>" in _texts(as_dicts(approval_card(_card(requester="U1"))))
    assert "<@" not in _texts(as_dicts(approval_card(_card(requester="<!channel>"))))


def test_decided_card_says_who_and_when_without_buttons() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    blocks = as_dicts(decided_card(_card(), Decided(decision=Decline(), by="U2", at=at)))
    assert all(b["type"] != "actions" for b in blocks)
    text = _texts(blocks)
    assert "Declined by <@U2>" in text
    assert f"<!date^{int(at.timestamp())}^" in text


def test_already_decided_text_names_the_winner() -> None:
    at = datetime(2026, 1, 2, tzinfo=UTC)
    assert "already approved by <@U7>" in already_decided_text("approved", "U7", at)


def test_question_shows_the_tool_question_escaped() -> None:
    blocks = as_dicts(question_blocks("open_ticket", {"question": "Priority? <!here>"}))
    text = _texts(blocks)
    assert "Priority? &lt;!here&gt;" in text
    assert "Reply in this thread" in text


def test_question_without_a_question_field_shows_the_payload() -> None:
    blocks = as_dicts(question_blocks("t", {"missing": ["priority"]}))
    assert "priority" in _texts(blocks)


def test_answer_text_is_escaped_and_bounded() -> None:
    text = answer_text("<!channel> " * 10000)
    assert "<!channel>" not in text and len(text) <= 39000
    assert answer_text("  ") == "(no answer)"


def test_oversized_reference_is_refused() -> None:
    with pytest.raises(ValueError, match="over 2000"):
        ApprovalRef(run_id="r" * 3000, tool_call_id="c", fingerprint="f").encode()
    assert ApprovalRef.decode("not json") is None
    assert ApprovalRef.decode(None) is None


def test_a_card_approved_with_edits_shows_original_and_approved_arguments() -> None:
    decision = Decided(
        decision=Approve(args={"id": "b"}), by="U2", at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    text = _texts(as_dicts(decided_card(_card(args={"id": "a"}), decision)))
    assert "Original arguments" in text
    assert text.index("Original") < text.index("*id* (was)\\n`a`") < text.index("(approved)\\n`b`")


def test_an_expired_card_says_so_without_buttons() -> None:
    decision = Decided(decision=Expire(), by=None, at=datetime(2026, 1, 1, tzinfo=UTC))
    blocks = as_dicts(decided_card(_card(), decision))
    assert "Expired" in _texts(blocks)
    assert not any(b["type"] == "actions" for b in blocks)
