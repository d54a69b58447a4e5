"""The card of a call presented again on a new card (SPEC 3.3): an edit that needs more
approval, or a tool whose definition changed. What the card showed stays, under a "Replaced"
header with the reason, and no buttons: only the new card decides the call."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

import bot.slack._messages as msg
from bot.slack.blocks._card import HEADER_LIMIT, CardView, approval_card, card_title


def replaced_card(card: CardView, line: str) -> list[Block]:
    """``card`` replaced by a new one: the header says so, ``line`` why; no buttons, and no
    "who may approve" (the new card says it)."""
    room = HEADER_LIMIT - len(msg.HEADER_REPLACED.format(title=""))
    title = card_title(card)
    if len(title) > room:
        title = title[: room - 1] + "…"
    header = HeaderBlock(text=PlainTextObject(text=msg.HEADER_REPLACED.format(title=title)))
    shown = [b for b in approval_card(card)[1:] if not isinstance(b, ActionsBlock | ContextBlock)]
    return [header, *shown, SectionBlock(text=MarkdownTextObject(text=line[:3000]))]
