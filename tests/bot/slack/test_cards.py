"""SPEC 12 cards: header, fields or code block, cut marked with "Show all", invisible
characters shown, who may approve, quorum, expiry, confirm; decided cards say the outcome in
the header; every message and view passes slack_sdk's own Block Kit models under hostile input.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from agents import Approve, Decline, Expire, Resume
from agents.models import call
from bot.policy._card_rules import CardRules, is_destructive
from bot.slack._ids import APPROVE_ACTION, SHOW_ALL_ACTION
from bot.slack.blocks._blocks import (
    answered_question,
    as_dicts,
    question_blocks,
    superseded_question,
)
from bot.slack.blocks._card import CardView, Decided, approval_card
from bot.slack.blocks._decided_card import decided_card, decided_fallback
from bot.slack.blocks._forms import form_blocks, form_fields, read_edit
from bot.slack.blocks._modal_views import arguments_modal, decline_modal, edit_modal
from bot.slack.blocks._refs import ApprovalRef, ModalRef
from tests.bot.conftest import BotFactory
from tools import create_tool
from tools.mcp import MCPArguments, MCPTool

REF = ApprovalRef(run_id="r" * 32, tool_call_id="call_1", fingerprint="f" * 64)
AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
NASTY = "<!channel> <@U999> & *bold* `tick` ```fence``` 🚀 <https://evil.example|ok>"
HOSTILE: dict[str, Any] = {
    "huge": "x" * 20_000,
    "nasty": NASTY,
    "nested": {"a": [NASTY, {"b": NASTY * 20}], "n": 1.5},
    **{f"k{i}": i for i in range(60)},
}
DECISIONS = [
    Approve(),
    Approve(args={**HOSTILE, "nasty": "changed"}),
    Decline(reason=NASTY * 100),
    Expire(),
    None,
]


def _card(**kw: Any) -> CardView:
    defaults: dict[str, Any] = {"ref": REF, "tool_name": "delete_record", "args": {"id": "a"}}
    return CardView(**(defaults | kw))


def _valid_message(blocks: list[Block]) -> list[dict[str, Any]]:
    """Each block re-parsed by slack_sdk and validated, elements included; Slack's limits."""
    dicts = as_dicts(blocks)
    assert len(dicts) <= 50
    for raw in dicts:
        parsed = Block.parse(raw)
        assert parsed is not None
        parsed.validate_json()
        for element in raw.get("elements") or []:
            if element.get("type") == "button":
                assert len(element["value"]) <= 2000
    assert len(json.dumps(dicts)) < 13_000  # Slack's undocumented msg_blocks_too_long
    return dicts


def _valid_view(view: dict[str, Any]) -> dict[str, Any]:
    View(**view).validate_json()
    assert len(view["blocks"]) <= 100
    for raw in view["blocks"]:
        parsed = Block.parse(raw)
        assert parsed is not None
        parsed.validate_json()
    return view


def _mrkdwn(dicts: list[dict[str, Any]]) -> str:
    """All mrkdwn text (where Slack parses mentions and links)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                out.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(dicts)
    return "\n".join(out)


def _hostile_card() -> CardView:
    return _card(
        tool_name=NASTY,
        title="D" * 5000,
        args=HOSTILE,
        requester="U1",
        agent_path=("ops", NASTY),
        rules=CardRules(approvers=("U2", "S3"), allow_self_approval=False, approvals_required=2),
        approved_by=("U2",),
        expires_at=AT,
    )


def test_a_hostile_card_passes_slack_sdks_models_and_injects_nothing() -> None:
    dicts = _valid_message(approval_card(_hostile_card()))
    text = _mrkdwn(dicts)
    for raw in ("<!channel>", "<@U999>", "<https://evil"):
        assert raw not in text
    assert dicts[0]["type"] == "header" and len(dicts[0]["text"]["text"]) <= 150


@pytest.mark.parametrize("decision", DECISIONS, ids=lambda d: getattr(d, "kind", "none"))
def test_every_decided_hostile_card_passes_slack_sdks_models(decision: Any) -> None:
    dicts = _valid_message(
        decided_card(_hostile_card(), Decided(decision=decision, by="U2", at=AT))
    )
    assert not any(b["type"] == "actions" and b.get("block_id") != "approval-args" for b in dicts)
    for raw in ("<!channel>", "<@U999>"):
        assert raw not in _mrkdwn(dicts)


def test_every_modal_passes_slack_sdks_models_with_hostile_arguments() -> None:
    meta = ModalRef(ref=REF, team="T1", channel="C1", message_ts="1.1", thread_ts="1.0")

    class Input(BaseModel):
        huge: str
        nasty: str
        nested: dict[str, Any]
        amount: float = 0

    _valid_view(decline_modal(meta, NASTY))
    _valid_view(edit_modal(meta, NASTY, form_fields(Input.model_json_schema()), HOSTILE))
    modal = _valid_view(arguments_modal(NASTY, HOSTILE))
    shown = "".join(b["text"]["text"] for b in modal["blocks"][1:])
    assert shown.count("x") >= 20_000  # every argument, in full


def test_questions_pass_slack_sdks_models_with_hostile_payloads() -> None:
    payload = {"question": NASTY * 100, "nested": HOSTILE}
    _valid_message(question_blocks(NASTY, payload, REF))
    _valid_message(question_blocks(NASTY, {"nested": HOSTILE}, REF))
    dicts = _valid_message(answered_question(NASTY, payload, "U1", AT, HOSTILE, reply=NASTY * 99))
    _valid_message(answered_question(NASTY, payload, "U1", AT, {"p": NASTY}, reply=NASTY))
    _valid_message(superseded_question(NASTY, payload))
    for raw in ("<!channel>", "<@U999>"):
        assert raw not in _mrkdwn(dicts)


def test_header_asks_with_the_title_else_the_id() -> None:
    assert as_dicts(approval_card(_card(title="Delete a record")))[0]["text"]["text"] == (
        "Approve Delete a record?"
    )
    assert as_dicts(approval_card(_card()))[0]["text"]["text"] == "Approve delete_record?"


async def test_a_posted_card_is_headed_by_the_tools_id_never_its_description(
    bot_with: BotFactory,
) -> None:
    async with bot_with([call("delete_record", {"id": "7"})]) as (bot, _):
        ts = await bot.mention("delete record 7")
        await bot.settle()
        [card] = bot.cards(ts)
        assert card.blocks[0]["text"]["text"] == "Approve delete-record?"
        assert "Delete a record by id" not in json.dumps(card.blocks)


def test_flat_short_arguments_are_fields_and_long_ones_a_code_block() -> None:
    flat = as_dicts(approval_card(_card(args={"id": "rec_1", "amount": 250, "force": True})))
    [args] = [b for b in flat if b.get("fields")]
    assert [f["text"] for f in args["fields"]] == [
        "*id*\n`rec_1`",
        "*amount*\n`250`",
        "*force*\n`true`",
    ]
    nested = _mrkdwn(as_dicts(approval_card(_card(args={"q": {"a": 1}}))))
    assert "```" in nested


def test_argument_names_with_underscores_and_empty_values_are_still_fields() -> None:
    args = {"record_id": "rec_1", "note": "", "dry_run": False}
    dicts = as_dicts(approval_card(_card(args=args)))
    [section] = [b for b in dicts if b.get("fields")]
    assert [f["text"] for f in section["fields"]] == [
        "`record_id`\n`rec_1`",
        '*note*\n`""`',
        "`dry_run`\n`false`",
    ]
    assert "```" not in _mrkdwn(dicts)


def test_cut_arguments_are_marked_and_show_all_opens_every_argument() -> None:
    dicts = as_dicts(approval_card(_card(args={"body": "y" * 4200 + "TAIL"})))
    assert "Cut to fit Slack" in _mrkdwn(dicts)
    [show] = [
        e
        for b in dicts
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == SHOW_ALL_ACTION
    ]
    assert ApprovalRef.decode(show["value"]) == REF
    assert "TAIL" not in json.dumps(dicts)
    modal = arguments_modal("t", {"body": "y" * 4200 + "TAIL"})
    assert "TAIL" in json.dumps(modal)
    short = as_dicts(approval_card(_card(args={"id": "a"})))
    assert SHOW_ALL_ACTION not in json.dumps(short) and "Cut to fit" not in json.dumps(short)


def test_invisible_characters_are_shown_visibly() -> None:
    card = _card(args={"db": "prod\u200bdb", "x": "a\u202eb"})
    text = json.dumps(as_dicts(approval_card(card)), ensure_ascii=False)
    assert "prod⟦U+200B⟧db" in text and "a⟦U+202E⟧b" in text
    assert "\u200b" not in text and "\u202e" not in text


def test_context_says_who_asked_via_what_who_may_approve_progress_and_expiry() -> None:
    card = _card(
        requester="U1",
        agent_path=("ops", "billing"),
        rules=CardRules(approvers=("U2", "S3"), allow_self_approval=False, approvals_required=2),
        approved_by=("U2",),
        expires_at=AT,
    )
    [context] = [b for b in as_dicts(approval_card(card)) if b["type"] == "context"]
    text = " · ".join(e["text"] for e in context["elements"])
    assert "Requested by <@U1>" in text
    assert "ops → billing" in text
    assert "<@U2>, <!subteam^S3> (not <@U1>, who asked for it)" in text
    assert "1 of 2 approvals: <@U2>" in text
    assert (
        f"<!date^{int(AT.timestamp())}^{{date_short_pretty}} at {{time}}|{AT.isoformat()}>" in text
    )
    anyone = json.dumps(as_dicts(approval_card(_card())))
    assert "Anyone in this workspace may approve" in anyone and "approvals" not in anyone


def _approve_button(card: CardView) -> dict[str, Any]:
    return next(
        e
        for b in as_dicts(approval_card(card))
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == APPROVE_ACTION
    )


def test_approve_asks_for_confirmation_only_when_the_rules_say_so() -> None:
    assert "confirm" not in _approve_button(_card())
    confirm = _approve_button(_card(rules=CardRules(confirm=True), destructive=True))["confirm"]
    assert confirm["confirm"]["text"] == "Approve" and confirm["style"] == "danger"


def _mcp(annotations: dict[str, Any]) -> MCPTool:
    async def run(input: MCPArguments, ctx: Any) -> None:
        return None

    return MCPTool(
        id="github_create_issue",
        description="Create an issue",
        input_schema=MCPArguments,
        execute=run,
        server="github",
        remote_name="create_issue",
        annotations=annotations,
    )


def test_mcp_tools_are_destructive_unless_their_annotations_rule_it_out() -> None:
    assert is_destructive(_mcp({}))
    assert is_destructive(_mcp({"destructiveHint": True}))
    assert not is_destructive(_mcp({"destructiveHint": False}))
    assert not is_destructive(_mcp({"readOnlyHint": True}))

    class In(BaseModel):
        id: str

    async def run(input: In, ctx: Any) -> None:
        return None

    assert not is_destructive(create_tool(id="x", description="x", input_schema=In, execute=run))


def test_a_card_names_the_mcp_server_and_says_destructive() -> None:
    card = _card(server="github", remote_name="create_issue", destructive=True)
    text = json.dumps(as_dicts(approval_card(card)), ensure_ascii=False)
    assert "`github · create_issue`" in text and "destructive" in text


@pytest.mark.parametrize(
    ("decision", "header"),
    [
        (Approve(), "✅ Approved: Delete"),
        (Decline(reason="no"), "🚫 Declined: Delete"),
        (Expire(), "⌛ Expired: Delete"),
        (None, "⚠️ Interrupted: Delete"),
    ],
)
def test_decided_cards_say_the_outcome_in_the_header(decision: Any, header: str) -> None:
    dicts = as_dicts(
        decided_card(_card(title="Delete"), Decided(decision=decision, by="U2", at=AT))
    )
    assert dicts[0]["text"]["text"] == header
    assert not any(b["type"] == "actions" for b in dicts)


def test_an_approved_quorum_card_names_every_approver_in_order() -> None:
    card = _card(rules=CardRules(approvals_required=2))
    decided = Decided(decision=Approve(), by="U3", at=AT, approvers=("U2", "U3"))
    dicts = as_dicts(decided_card(card, decided))
    assert "Approved by <@U2> and <@U3>" in _mrkdwn(dicts) and "2 of 2 approvals" in _mrkdwn(dicts)
    assert decided_fallback(card, decided).startswith("Approved by U2 and U3")
    three = Decided(decision=Approve(), by="U4", at=AT, approvers=("U2", "U3", "U4"))
    assert "Approved by <@U2>, <@U3> and <@U4>" in _mrkdwn(as_dicts(decided_card(card, three)))


def test_the_self_approval_hint_follows_the_rules() -> None:
    def context(rules: CardRules) -> str:
        blocks = as_dicts(approval_card(_card(requester="U1", rules=rules)))
        return _mrkdwn([b for b in blocks if b["type"] == "context"])

    assert "not <@U1>, who asked for it" in context(CardRules(allow_self_approval=False))
    allowed = context(CardRules(allow_self_approval=True))
    assert "not <@U1>" not in allowed and "not the requester" not in allowed


def test_a_declined_card_gives_the_reason_and_who() -> None:
    dicts = as_dicts(
        decided_card(_card(), Decided(decision=Decline(reason="wrong <!here>"), by="U2", at=AT))
    )
    text = _mrkdwn(dicts)
    assert "Declined by <@U2>" in text and "Reason: wrong &lt;!here&gt;" in text


def test_only_changed_arguments_count_as_edited() -> None:
    same = Decided(decision=Approve(args={"id": "a", "n": 250.0}), by="U2", at=AT)
    text = json.dumps(as_dicts(decided_card(_card(args={"id": "a", "n": 250}), same)))
    assert "(was)" not in text and "Original" not in text


def test_an_answered_question_shows_the_answer() -> None:
    blocks = as_dicts(
        answered_question("ask", {"question": "Which?"}, "U1", AT, {"account": "acme"})
    )
    assert "acme" in _mrkdwn(blocks)
    assert "Answer" in _mrkdwn(
        as_dicts(answered_question("ask", {"question": "?"}, "U1", AT, "blue"))
    )


class _EditInput(BaseModel):
    body: str
    amount: float
    note: str = ""


def _state(**values: Any) -> dict[str, Any]:
    return {f"field:{k}": {"value": {"value": v}} for k, v in values.items()}


def test_edit_never_changes_an_untouched_value() -> None:
    fields = form_fields(_EditInput.model_json_schema())
    original = {"body": "z" * 4200, "amount": 250, "note": "hi"}
    blocks = as_dicts(form_blocks(fields, original))
    body = next(b for b in blocks if b["block_id"] == "field:body")
    assert body["type"] == "section" and "kept exactly as it is" in body["text"]["text"]
    # Slack sends no state for the read-only field; the number comes back as typed
    args, errors = read_edit(fields, _state(amount="250", note="changed"), original)
    assert errors == {}
    assert args == {"body": "z" * 4200, "amount": 250, "note": "changed"}
    assert isinstance(args["amount"], int) and len(args["body"]) == 4200


def test_decline_reason_label_is_not_optional_twice() -> None:
    meta = ModalRef(ref=REF, team="T1", channel="C1", message_ts="1.1", thread_ts="1.0")
    [_, reason] = decline_modal(meta, "t")["blocks"]
    assert reason["label"]["text"] == "Reason" and reason["optional"] is True


def test_resume_decisions_are_not_cards() -> None:
    assert Resume(data={}).kind == "resume"
