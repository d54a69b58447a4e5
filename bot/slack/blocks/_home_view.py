"""The App Home tab, "Waiting for you": a pure ``View`` builder and who has it open.

Each pending approval is a section (its title, tool, requester and a link to its thread), the
context line of its card (who may approve, quorum, expiry) and the card's own buttons: the same
action ids and opaque values, so the listeners and the single-use claim treat a click here like
one on the card.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

import bot.slack._messages as msg
from bot.slack.blocks._card import (
    CardView,
    card_title,
    decision_buttons,
    quorum_progress,
    slack_date,
    tool_label,
)
from bot.slack.blocks._mrkdwn import escape, escape_truncated, mention

HOME_BLOCK_LIMIT = 100
"""Slack's limit on blocks in a Home view."""
HOME_ITEMS = 24
"""Approvals listed at most (4 blocks each, under ``HOME_BLOCK_LIMIT``); the rest are counted."""
HOME_BLOCK_PREFIX = "home-approval-"
"""``block_id`` prefix of each approval's buttons (block ids are unique within a view)."""
_VIEWERS = 500


@dataclass(frozen=True, kw_only=True)
class Waiting:
    """One pending approval as the Home tab lists it."""

    card: CardView
    """What its card shows (refreshed from the stored call)."""
    link: str | None
    """A link to the card in its thread, or None when none could be made."""


class HomeViewers:
    """Who opened the Home tab on this instance (most recent ``_VIEWERS``): their view is
    published again after each decision, so decided approvals leave it."""

    def __init__(self) -> None:
        self._users: dict[str, None] = {}

    def add(self, user: str) -> None:
        """Remember ``user`` (most recent last)."""
        self._users.pop(user, None)
        self._users[user] = None
        while len(self._users) > _VIEWERS:
            self._users.pop(next(iter(self._users)))

    def users(self) -> tuple[str, ...]:
        """Every remembered viewer."""
        return tuple(self._users)


def home_view(waiting: list[Waiting]) -> View:
    """The "Waiting for you" Home view for ``waiting`` (newest first)."""
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=msg.HOME_HEADER)),
        ContextBlock(elements=[MarkdownTextObject(text=msg.HOME_INTRO)]),
    ]
    if not waiting:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=msg.HOME_NOTHING)))
    for n, item in enumerate(waiting[:HOME_ITEMS]):
        blocks += [DividerBlock(), *_item(item, n)]
    if len(waiting) > HOME_ITEMS:
        more = msg.HOME_MORE.format(count=len(waiting) - HOME_ITEMS)
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=more)]))
    return View(type="home", blocks=blocks)


def _item(item: Waiting, n: int) -> list[Block]:
    card = item.card
    fields = {
        "title": escape_truncated(card_title(card), 150).replace("*", "∗"),
        "tool": "`" + escape_truncated(tool_label(card), 80).replace("`", "'") + "`",
        "who": mention(card.requester) if card.requester else escape("someone"),
    }
    text = (
        msg.HOME_ITEM.format(link=item.link, **fields)
        if item.link
        else msg.HOME_ITEM_NO_LINK.format(**fields)
    )
    context = [p for p in (quorum_progress(card), _expiry(card)) if p]
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=text[:3000]))]
    if context:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=p[:3000]) for p in context]))
    blocks.append(decision_buttons(card, block_id=f"{HOME_BLOCK_PREFIX}{n}"))
    return blocks


def _expiry(card: CardView) -> str | None:
    return None if card.expires_at is None else msg.EXPIRES.format(when=slack_date(card.expires_at))
