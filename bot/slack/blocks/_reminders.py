"""The reminder posted under a card close to its expiry, and what it says once decided."""

from __future__ import annotations

import bot.slack._messages as msg
from bot.slack.blocks._card import CardView, Decided, names, slack_date, tool_label
from bot.slack.blocks._mrkdwn import escape_truncated


def reminder_key(run_id: str, tool_call_id: str) -> str:
    """Where the reminder's ``ts`` is kept (the card's decision updates it)."""
    return f"slack:reminder-ts:{run_id}:{tool_call_id}"


def _tool(view: CardView) -> str:
    return escape_truncated(tool_label(view), 80).replace("`", "'")


def reminder_text(view: CardView, expires_at_text: str) -> str:
    """The reminder: still waiting, expires then."""
    return msg.REMINDER.format(tool=_tool(view), when=expires_at_text)


def reminder_extended(view: CardView, expires_at_text: str) -> str:
    """The reminder after its call was extended: no longer the time to act (the next reminder
    comes before the new expiry)."""
    return msg.REMINDER_EXTENDED.format(tool=_tool(view), when=expires_at_text)


def reminder_done(view: CardView, decided: Decided) -> str:
    """The reminder after its card was decided: what happened, by whom, when."""
    kind = {"withdraw": "decline"}.get(decided.kind, decided.kind)
    template = {
        "approve": msg.REMINDER_APPROVED,
        "decline": msg.REMINDER_DECLINED,
        "expire": msg.REMINDER_EXPIRED,
    }.get(kind, msg.REMINDER_INTERRUPTED)
    return template.format(
        tool=_tool(view), who=names(decided.deciders), when=slack_date(decided.at)
    )
