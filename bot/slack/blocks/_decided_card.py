"""A card after its outcome: the header says it ("✅ Approved", "⚠️ Interrupted" …), then who
decided, when and why (an interrupted call: who approved it, and that the instance running it
stopped), without decision buttons (an expired call's card offers "Ask again" to its
requester); and its notification text."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

import bot.slack._messages as msg
from bot.slack._ids import APPROVAL_BLOCK, ASK_AGAIN_ACTION
from bot.slack.blocks._args import changed_keys
from bot.slack.blocks._card import (
    FALLBACK_LIMIT,
    CardView,
    Decided,
    args_blocks,
    context_block,
    header_block,
    named,
    names,
    slack_date,
    tool_section,
    why_blocks,
)
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks.standing._grant_blocks import granted_too

_HEADERS = {
    "approve": msg.HEADER_APPROVED,
    "decline": msg.HEADER_DECLINED,
    "expire": msg.HEADER_EXPIRED,
    "withdraw": msg.HEADER_WITHDRAWN,
}
_LINES = {
    "approve": msg.APPROVED_BY,
    "decline": msg.DECLINED_BY,
    "expire": msg.EXPIRED_CARD,
    "withdraw": msg.WITHDRAWN_BY,
}
_DECIDED_WORD = {
    "approve": "approved",
    "decline": "declined",
    "expire": "expired",
    "withdraw": "withdrawn",
}


def decided_card(card: CardView, decided: Decided, *, ask_again: bool = False) -> list[Block]:
    """The card after its outcome: the outcome in the header, who, when, why; no decision
    buttons (``ask_again``: an expired card offers its requester "Ask again")."""
    decision = decided.decision
    header = _HEADERS.get(decided.kind, msg.HEADER_INTERRUPTED)
    edited = decision.args if decision is not None and decision.kind == "approve" else None
    if edited is not None and not changed_keys(card.args, edited):
        edited = None
    return [
        header_block(header, card),
        tool_section(card),
        *why_blocks(card, pending=False),
        *args_blocks(card, edited),
        SectionBlock(text=MarkdownTextObject(text=outcome_line(card, decided))),
        context_block(card, pending=False),
        *([ask_again_button(card)] if ask_again and decided.kind == "expire" else []),
    ]


def ask_again_button(card: CardView) -> ActionsBlock:
    """ "Ask again" under an expired card: only its requester may use it (SPEC 12)."""
    return ActionsBlock(
        block_id=APPROVAL_BLOCK,
        elements=[
            ButtonElement(
                text=PlainTextObject(text=msg.ASK_AGAIN_BUTTON),
                action_id=ASK_AGAIN_ACTION,
                value=card.ref.encode(),
            )
        ],
    )


def outcome_line(card: CardView, decided: Decided) -> str:
    """Who decided what and when (quorum count, decline reason), as a decided card says it."""
    decision, kind = decided.decision, decided.kind
    template = _LINES.get(kind, msg.INTERRUPTED_CARD)
    if kind == "interrupted" and any(decided.deciders):
        template = msg.INTERRUPTED_AFTER
    line = template.format(who=names(decided.deciders), when=slack_date(decided.at))
    if kind == "approve" and decided.ran_again:
        line += "\n" + msg.RAN_AGAIN
    if kind == "approve" and len(decided.approvers) > 1:
        count = len(decided.approvers)
        needed = max(card.rules.approvals_required, count)
        line += " · " + msg.QUORUM.format(count=count, needed=needed)
    if decision is not None and decision.kind == "approve" and decision.grant is not None:
        line += "\n" + granted_too(decision.grant)
    if decision is not None and decision.kind == "decline" and decision.reason:
        line += "\n" + msg.DECIDED_REASON.format(reason=escape_truncated(decision.reason, 1000))
    return line


def _joined(who: list[str]) -> str:
    return msg.AND.format(rest=", ".join(who[:-1]), last=who[-1]) if who[1:] else who[0]


def decided_fallback(card: CardView, decided: Decided) -> str:
    """The notification text of a decided card."""
    kind = decided.kind
    if kind == "expire":
        return escape_truncated(msg.EXPIRED_FALLBACK.format(tool=named(card)), FALLBACK_LIMIT)
    who = [u for u in decided.deciders if u]
    if kind == "interrupted":  # never "by someone": who approved it, and that it stopped
        template = msg.INTERRUPTED_AFTER_FALLBACK if who else msg.INTERRUPTED_FALLBACK
        text = template.format(who=_joined(who), tool=named(card))
        return escape_truncated(text, FALLBACK_LIMIT)
    who = who or ["someone"]
    text = msg.DECIDED_FALLBACK.format(
        decision=_DECIDED_WORD.get(kind, kind).capitalize(), who=_joined(who), tool=named(card)
    )
    return escape_truncated(text, FALLBACK_LIMIT)
