"""Block Kit for every message the bot posts: pure functions over ``slack_sdk.models.blocks``.

Untrusted text (tool names, arguments, questions, agent output) is escaped and truncated here,
so every message fits Slack's limits (section text 3000, button value 2000, 50 blocks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

import bot.slack._messages as msg
from agents import Decision
from bot.slack._ids import (
    APPROVAL_BLOCK,
    APPROVE_ACTION,
    DECLINE_ACTION,
    EDIT_ACTION,
    PROVIDE_ACTION,
    SUSPENSION_BLOCK,
)
from bot.slack._mrkdwn import code_block, escape, escape_truncated, mention
from bot.slack._refs import ApprovalRef

SECTION_LIMIT = 3000
"""Slack's limit on a section's text."""
TEXT_LIMIT = 39000
"""Stay under Slack's 40,000-character message ``text``."""
FALLBACK_LIMIT = 300
"""Notification text is short."""
_NAME_LIMIT = 80


@dataclass(frozen=True, kw_only=True)
class CardView:
    """What an approval card shows."""

    ref: ApprovalRef
    """Which pending call the buttons decide."""
    tool_name: str
    """The tool that will run."""
    args: dict[str, Any]
    """The arguments it will run with."""
    requester: str | None = None
    """Slack user id of the person whose request led to this call."""
    agent_path: tuple[str, ...] = field(default_factory=tuple)
    """The chain of agents, when a sub-agent asks."""


@dataclass(frozen=True, kw_only=True)
class Decided:
    """A card's decision as shown: what was decided, by whom, when."""

    decision: Decision
    """The runtime's decision: ``Approve`` (its ``args`` are edited arguments, shown next to the
    original), ``Decline`` (its ``reason`` is shown escaped) or ``Expire``."""
    by: str | None
    """Slack user id of who decided (None: the system, e.g. expiry)."""
    at: datetime
    """When (timezone-aware)."""


_DECIDED_WORD = {"approve": "approved", "decline": "declined", "expire": "expired"}


def slack_date(at: datetime) -> str:
    """``<!date^…>``: shown in each reader's time zone, with an ISO fallback."""
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{at.isoformat()}>"


def _name(text: str) -> str:
    return escape_truncated(text, _NAME_LIMIT).replace("`", "'")


def _args_section(label: str, args: dict[str, Any]) -> SectionBlock:
    text = json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    head = label + "\n"
    return SectionBlock(
        text=MarkdownTextObject(text=head + code_block(text, SECTION_LIMIT - len(head)))
    )


def _card_body(card: CardView, edited: dict[str, Any] | None = None) -> list[Block]:
    title = msg.APPROVAL_TITLE.format(tool=_name(card.tool_name))
    if len(card.agent_path) > 1:
        title += "\n" + msg.APPROVAL_VIA.format(path=_name(" → ".join(card.agent_path)))
    if edited is None or edited == card.args:
        args = [_args_section(msg.ARGUMENTS_LABEL, card.args)]
    else:
        args = [
            _args_section(msg.ORIGINAL_ARGUMENTS_LABEL, card.args),
            _args_section(msg.APPROVED_ARGUMENTS_LABEL, edited),
        ]
    requested = (
        msg.REQUESTED_BY.format(user=card.requester)
        if card.requester and mention(card.requester).startswith("<@")
        else msg.REQUESTED_BY_UNKNOWN
    )
    return [
        SectionBlock(text=MarkdownTextObject(text=title)),
        *args,
        ContextBlock(elements=[MarkdownTextObject(text=requested)]),
    ]


def approval_card(card: CardView) -> list[Block]:
    """The card asking for a decision: what will run, who asked, Approve / Decline."""
    value = card.ref.encode()
    buttons = ActionsBlock(
        block_id=APPROVAL_BLOCK,
        elements=[
            ButtonElement(
                text=PlainTextObject(text=msg.APPROVE_BUTTON),
                action_id=APPROVE_ACTION,
                value=value,
                style="primary",
            ),
            ButtonElement(
                text=PlainTextObject(text=msg.EDIT_BUTTON),
                action_id=EDIT_ACTION,
                value=value,
            ),
            ButtonElement(
                text=PlainTextObject(text=msg.DECLINE_BUTTON),
                action_id=DECLINE_ACTION,
                value=value,
                style="danger",
            ),
        ],
    )
    return [*_card_body(card), buttons]


def approval_fallback(card: CardView) -> str:
    """The notification text of an approval card."""
    return escape_truncated(msg.APPROVAL_FALLBACK.format(tool=card.tool_name), FALLBACK_LIMIT)


def decided_card(card: CardView, decided: Decided) -> list[Block]:
    """The card after a decision: who decided and when, no buttons."""
    decision = decided.decision
    templates = {
        "approve": msg.APPROVED_BY,
        "decline": msg.DECLINED_BY,
        "expire": msg.EXPIRED_CARD,
    }
    template = templates.get(decision.kind, msg.APPROVED_BY)
    line = template.format(who=mention(decided.by), when=slack_date(decided.at))
    if decision.kind == "decline" and decision.reason:
        line += ": " + escape_truncated(decision.reason, 500)
    edited = decision.args if decision.kind == "approve" else None
    body = _card_body(card, edited)
    return [*body, ContextBlock(elements=[MarkdownTextObject(text=line)])]


def decided_fallback(card: CardView, decided: Decided) -> str:
    """The notification text of a decided card."""
    kind = decided.decision.kind
    if kind == "expire":
        return escape_truncated(msg.EXPIRED_FALLBACK.format(tool=card.tool_name), FALLBACK_LIMIT)
    text = msg.DECIDED_FALLBACK.format(
        decision=_DECIDED_WORD.get(kind, kind).capitalize(),
        who=decided.by or "someone",
        tool=card.tool_name,
    )
    return escape_truncated(text, FALLBACK_LIMIT)


def already_decided_text(decision: str, by: str | None, at: datetime) -> str:
    """The ephemeral answer to a click on a card someone already decided."""
    return msg.ALREADY_DECIDED.format(
        decision=escape(decision), who=mention(by), when=slack_date(at)
    )


def question_blocks(
    tool_name: str, suspend_payload: dict[str, Any] | None, ref: ApprovalRef | None = None
) -> list[Block]:
    """What a suspended tool asks, posted in the thread; a reply in the thread answers it,
    and with ``ref`` (the tool has a ``resume_schema``) a "Provide details" button opens a form.
    """
    title = msg.QUESTION_TITLE.format(tool=_name(tool_name))
    question = _question_text(suspend_payload or {})
    body = escape_truncated(question, SECTION_LIMIT) if question else None
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=title))]
    if body:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=body)))
    elif suspend_payload:
        payload = json.dumps(suspend_payload, indent=2, ensure_ascii=False, default=str)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=code_block(payload, 2900))))
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=msg.QUESTION_HINT)]))
    if ref is not None:
        button = ButtonElement(
            text=PlainTextObject(text=msg.PROVIDE_BUTTON),
            action_id=PROVIDE_ACTION,
            value=ref.encode(),
            style="primary",
        )
        blocks.append(ActionsBlock(block_id=SUSPENSION_BLOCK, elements=[button]))
    return blocks


def answered_question(
    tool_name: str, suspend_payload: dict[str, Any] | None, by: str, at: datetime
) -> list[Block]:
    """A question after someone provided the details: no button, who answered and when."""
    line = msg.ANSWERED_BY.format(who=mention(by), when=slack_date(at))
    blocks = question_blocks(tool_name, suspend_payload)[:-1]  # without the reply hint
    return [*blocks, ContextBlock(elements=[MarkdownTextObject(text=line)])]


def question_fallback(tool_name: str, suspend_payload: dict[str, Any] | None) -> str:
    """The notification text of a suspended tool's question."""
    question = _question_text(suspend_payload or {})
    text = question or msg.QUESTION_FALLBACK.format(tool=tool_name)
    return escape_truncated(text, FALLBACK_LIMIT)


def _question_text(payload: dict[str, Any]) -> str:
    for key in ("question", "message", "prompt", "reason"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def answer_text(text: str) -> str:
    """Agent output as message text: escaped, within Slack's message limit."""
    return escape_truncated(text, TEXT_LIMIT) if text.strip() else msg.EMPTY_ANSWER


def as_dicts(blocks: list[Block]) -> list[dict[str, Any]]:
    """Validated JSON for the Web API (raises ``SlackObjectFormationError`` on a broken limit)."""
    return [b.to_dict() for b in blocks]
