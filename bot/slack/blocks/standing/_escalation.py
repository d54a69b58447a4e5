"""What escalation says (SPEC 15): the card's line naming who else may now approve, and the
message in the thread that mentions a step's ``notify`` (users ``<@U…>``, groups
``<!subteam^S…>``). Pure functions; the words are in ``bot.slack._messages``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import bot.slack._messages as msg
from bot.policy._card_rules import CardRules

_MENTIONS_SHOWN = 20


def escalated_line(rules: CardRules, mention: Callable[[str], str]) -> str | None:
    """The pending card's "Escalated: <!subteam^S…> may now approve too" (the step alone when
    it added nobody); None before any step."""
    if rules.escalated_approvers:
        who = ", ".join(mention(a) for a in rules.escalated_approvers[:_MENTIONS_SHOWN])
        return msg.ESCALATED_APPROVERS.format(who=who)
    if rules.escalation_step:
        return msg.ESCALATED_CONTEXT.format(step=rules.escalation_step)
    return None


def escalation_text(
    *,
    notify: Sequence[str],
    approvers: Sequence[str],
    tool: str,
    waited: str,
    mention: Callable[[str], str],
) -> str:
    """The step's message in the call's thread: who is told, what waits and for how long,
    and who may now approve it too."""
    told = " ".join(mention(a) for a in notify[:_MENTIONS_SHOWN])
    text = msg.ESCALATION.format(who=told, tool=tool, waited=waited)
    if not notify:
        text = text.removeprefix(": ")
        text = text[:1].upper() + text[1:]
    if approvers:
        added = ", ".join(mention(a) for a in approvers[:_MENTIONS_SHOWN])
        text += msg.ESCALATION_APPROVERS.format(who=added)
    return text
