"""The App Home tab, "Waiting for you": a pure ``View`` builder and who has it open.

Each pending approval is a section (its title, tool, requester, a link to its thread and its
arguments as on the card: fields when flat and short, else a code block, cut to fit), the
context line of its card (who may approve, quorum, expiry) and the card's own buttons: the same
action ids and opaque values, so the listeners and the single-use claim treat a click here like
one on the card. Four blocks per approval: ``HOME_ITEMS`` of them fit Slack's 100.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
from bot.slack.blocks._args import as_json, field_value, reveal
from bot.slack.blocks._card import (
    CardView,
    card_title,
    decision_buttons,
    quorum_progress,
    slack_date,
    tool_label,
)
from bot.slack.blocks._mrkdwn import code_block, escape, escape_truncated, mention

HOME_BLOCK_LIMIT = 100
"""Slack's limit on blocks in a Home view."""
HOME_ITEMS = 24
"""Approvals listed at most (4 blocks each, under ``HOME_BLOCK_LIMIT``); the rest are counted."""
HOME_BLOCK_PREFIX = "home-approval-"
"""``block_id`` prefix of each approval's buttons (block ids are unique within a view)."""
HOME_ARGS_LIMIT = 600
"""Characters of an approval's arguments shown as a code block (the card shows them all)."""
HOME_FIELDS_LIMIT = 10
"""Slack's limit on a section's fields: more arguments than this go in a code block."""
_VIEWERS = 10_000
"""Home viewers remembered per instance (most recent): every person of a 5,000-person workspace
twice over; a forgotten viewer's tab refreshes when they open it again."""


@dataclass(frozen=True, kw_only=True)
class Waiting:
    """One pending approval as the Home tab lists it."""

    card: CardView
    """What its card shows (refreshed from the stored call)."""
    link: str | None
    """A link to the card in its thread (to the thread when the call has no card), or None
    when none could be made."""
    threaded: bool = True
    """False: the call's run is in no Slack thread (started through the API or a script)."""


class HomeViewers:
    """Who opened the Home tab on this instance (most recent ``_VIEWERS``) and which calls
    each one's last published view lists: a decision publishes again the views it changes,
    so decided approvals leave them. Who lists a call is indexed by the call: finding them
    costs what they are, not what every viewer shows."""

    def __init__(self) -> None:
        self._users: dict[str, frozenset[tuple[str, str]]] = {}
        self._listing: dict[str, dict[str, set[str]]] = {}
        """run id → tool call id → the viewers whose view lists that call."""
        self._notes: dict[str, str] = {}

    def add(self, user: str) -> None:
        """Remember ``user`` (most recent last)."""
        shown = self._users.pop(user, frozenset())
        self._users[user] = shown
        while len(self._users) > _VIEWERS:
            oldest = next(iter(self._users))
            self._index(oldest, self._users.pop(oldest), frozenset())

    def users(self) -> tuple[str, ...]:
        """Every remembered viewer."""
        return tuple(self._users)

    def knows(self, user: str) -> bool:
        """Whether ``user`` opened the Home tab here (and is remembered)."""
        return user in self._users

    def showed(self, user: str, calls: frozenset[tuple[str, str]]) -> None:
        """``user``'s Home tab now lists ``calls`` (``(run_id, tool_call_id)``)."""
        if user in self._users:
            self._index(user, self._users[user], calls)
            self._users[user] = calls

    def showing(self, run_id: str, tool_call_id: str | None = None) -> set[str]:
        """The viewers whose Home tab lists that call (``None``: any call of the run)."""
        calls = self._listing.get(run_id, {})
        if tool_call_id is not None:
            return set(calls.get(tool_call_id, ()))
        return set().union(*calls.values())

    def _index(
        self, user: str, before: frozenset[tuple[str, str]], after: frozenset[tuple[str, str]]
    ) -> None:
        for run_id, tool_call_id in before - after:
            calls = self._listing.get(run_id, {})
            viewers = calls.get(tool_call_id, set())
            viewers.discard(user)
            if not viewers:
                calls.pop(tool_call_id, None)
                if not calls:
                    self._listing.pop(run_id, None)
        for run_id, tool_call_id in after - before:
            self._listing.setdefault(run_id, {}).setdefault(tool_call_id, set()).add(user)

    def tell(self, user: str, text: str) -> None:
        """Show ``text`` on ``user``'s Home tab until they open it again: what a click there on
        a call in no Slack thread came to (there is no thread for an ephemeral)."""
        self._notes.pop(user, None)
        self._notes[user] = text
        while len(self._notes) > _VIEWERS:
            self._notes.pop(next(iter(self._notes)))

    def note(self, user: str) -> str | None:
        """What ``user``'s Home tab is to tell them, or None."""
        return self._notes.get(user)

    def opened(self, user: str) -> None:
        """``user`` opened the Home tab anew: what it told them was seen."""
        self._notes.pop(user, None)


def home_view(waiting: list[Waiting], *, more: bool = False, note: str | None = None) -> View:
    """The "Waiting for you" Home view for ``waiting`` (newest first); ``more``: older ones
    wait too, not listed (uncounted); ``note``: what the viewer's last click here came to."""
    blocks: list[Block] = [
        HeaderBlock(text=PlainTextObject(text=msg.HOME_HEADER)),
        ContextBlock(elements=[MarkdownTextObject(text=msg.HOME_INTRO)]),
    ]
    if note:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=note[:3000])))
    if not waiting:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=msg.HOME_NOTHING)))
    for n, item in enumerate(waiting[:HOME_ITEMS]):
        blocks += [DividerBlock(), *_item(item, n)]
    if len(waiting) > HOME_ITEMS:
        counted = msg.HOME_MORE.format(count=len(waiting) - HOME_ITEMS)
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=counted)]))
    elif more:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=msg.HOME_MORE_OLDER)]))
    return View(type="home", blocks=blocks)


def _item(item: Waiting, n: int) -> list[Block]:
    card = item.card
    parts = {
        "title": escape_truncated(card_title(card), 150).replace("*", "∗"),
        "tool": "`" + escape_truncated(tool_label(card), 80).replace("`", "'") + "`",
        "who": mention(card.requester) if card.requester else escape("someone"),
    }
    if item.link:
        text = msg.HOME_ITEM.format(link=item.link, **parts)
    elif not item.threaded:
        text = msg.HOME_ITEM_NO_THREAD.format(**parts)
    else:
        text = msg.HOME_ITEM_NO_LINK.format(**parts)
    fields = _arg_fields(card.args)
    if fields is None:
        text += "\n" + _arg_code(card.args)
    context = [p for p in (quorum_progress(card), _expiry(card)) if p]
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=text[:3000]), fields=fields or None)
    ]
    if context:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=p[:3000]) for p in context]))
    blocks.append(decision_buttons(card, block_id=f"{HOME_BLOCK_PREFIX}{n}"))
    return blocks


def _expiry(card: CardView) -> str | None:
    return None if card.expires_at is None else msg.EXPIRES.format(when=slack_date(card.expires_at))


def _arg_fields(args: dict[str, Any]) -> list[MarkdownTextObject] | None:
    """Flat short arguments as section fields (as on the card); None when they do not fit."""
    if not args or len(args) > HOME_FIELDS_LIMIT:
        return None if args else []
    fields = []
    for key, value in args.items():
        shown = field_value(value)
        name = reveal(str(key))
        if shown is None or len(name) > 60 or any(c in name for c in "*_~`\n"):
            return None
        fields.append(MarkdownTextObject(text=f"*{escape(name)}*\n{shown}"))
    return fields


def _arg_code(args: dict[str, Any]) -> str:
    """The arguments as a code block of at most ``HOME_ARGS_LIMIT`` characters, marked when cut."""
    text = as_json(args)
    block = code_block(text, HOME_ARGS_LIMIT)
    if len(escape(text.replace("```", "`\u200b``"))) > HOME_ARGS_LIMIT - 6:
        block += "\n" + msg.HOME_ARGS_CUT
    return block
