"""Block Kit for every message the bot posts: pure functions over ``slack_sdk.models.blocks``.

Untrusted text (tool names, arguments, questions, agent output) is escaped and truncated here,
so every message fits Slack's limits (section text 3000, button value 2000, 50 blocks).
"""

from __future__ import annotations

import json
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
from bot.slack._ids import PROVIDE_ACTION, SUSPENSION_BLOCK
from bot.slack.blocks._args import args_view, as_json, reveal
from bot.slack.blocks._card import (
    FALLBACK_LIMIT,
    CardView,
    Decided,
    approval_card,
    approval_fallback,
    slack_date,
)
from bot.slack.blocks._decided_card import decided_card, decided_fallback
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated, mention
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks._replaced import replaced_card

__all__ = [
    "FALLBACK_LIMIT",
    "CardView",
    "Decided",
    "already_decided_text",
    "answer_text",
    "answered_question",
    "approval_card",
    "approval_fallback",
    "as_dicts",
    "decided_card",
    "decided_fallback",
    "question_blocks",
    "question_fallback",
    "replaced_card",
    "slack_date",
    "superseded_question",
]

SECTION_LIMIT = 3000
"""Slack's limit on a section's text."""
TEXT_LIMIT = 39000
"""Stay under Slack's 40,000-character message ``text``."""
REPLY_LIMIT = 1000
"""The thread reply shown under an answered question (cut beyond it)."""
_NAME_LIMIT = 80


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
    title = msg.QUESTION_TITLE.format(tool=escape_truncated(tool_name, 80).replace("`", "'"))
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
    tool_name: str,
    suspend_payload: dict[str, Any] | None,
    by: str,
    at: datetime,
    answer: Any = None,
    *,
    reply: str | None = None,
) -> list[Block]:
    """A question after someone answered: no button; the answer the tool received (its
    ``resume_data``, fields like arguments), the thread ``reply`` it came from, who and when."""
    line = msg.ANSWERED_BY.format(who=mention(by), when=slack_date(at))
    blocks = question_blocks(tool_name, suspend_payload)[:-1]  # without the reply hint
    if answer is not None:
        blocks.extend(_answer_blocks(answer))
    if reply and reply.strip():
        quoted = escape_truncated(reveal(reply.strip()), REPLY_LIMIT)
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=msg.FROM_REPLY.format(reply=quoted)))
        )
    return [*blocks, ContextBlock(elements=[MarkdownTextObject(text=line)])]


def superseded_question(tool_name: str, suspend_payload: dict[str, Any] | None) -> list[Block]:
    """A question asked again further down the thread: no button here (the new one has it)."""
    blocks = question_blocks(tool_name, suspend_payload)[:-1]  # without the reply hint
    return [*blocks, ContextBlock(elements=[MarkdownTextObject(text=msg.ASKED_AGAIN_BELOW)])]


def _answer_blocks(answer: Any) -> list[Block]:
    if isinstance(answer, dict):
        return list(args_view(msg.ANSWER_LABEL, answer).blocks)
    if isinstance(answer, str):
        body = escape_truncated(reveal(answer), SECTION_LIMIT - 20)
    else:
        body = code_block(as_json(answer), SECTION_LIMIT - 20)
    return [SectionBlock(text=MarkdownTextObject(text=msg.ANSWER_LABEL + "\n" + body))]


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
