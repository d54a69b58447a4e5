"""A pending call kept decidable for longer ("Extend", SPEC 12) shown with its new expiry
wherever it shows, whichever way it was extended (the card's button, the Home tab, the HTTP API):

- its card redrawn (a batch card: the whole message) and its card record rewritten
  (``CardStore.extended``), so whatever draws it from the record later shows the new time;
- a reminder already posted for the old expiry says it was extended (its time no longer holds);
  the sweep posts the next one as long before the new expiry (``agents.remind_at``);
- the Home tabs that list it, and the extender's, published again (they show its expiry).

The card is drawn under its thread's lock with the call read again: a decision taken meanwhile
is never drawn back as pending (its own update shows it).
"""

from __future__ import annotations

import contextlib

from agents import PendingToolCall
from bot.slack._ids import thread_id
from bot.slack._services import Services
from bot.slack.blocks._card import slack_date
from bot.slack.blocks._reminders import reminder_extended
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import rewrite_reminder
from bot.slack.delivery._shown import show_waiting
from bot.slack.delivery.home._publish import republish


async def show_extension(
    services: Services,
    run_id: str,
    call: PendingToolCall,
    *,
    by: str | None = None,
    card: PostedCard | None = None,
    lock_held: bool = False,
) -> None:
    """``call``, just extended (by ``by``), shown with its new expiry: its card and record, its
    reminder, the Home tabs (see the module docstring). ``card``: the call's card, when the
    caller read it; ``lock_held``: the caller holds that card's thread lock. A call never shown
    as a card (its run is in no Slack thread) is shown on the Home tabs alone."""
    viewers = services.home_viewers
    affected = viewers.showing(run_id, call.tool_call_id)
    if by is not None and viewers.knows(by):
        affected.add(by)  # their Home tab says what their click came to
    try:
        card = card or await services.cards.find(run_id, call.tool_call_id)
        if card is None:
            return
        where = thread_id(card.team, card.channel, card.thread_ts)
        lock = contextlib.nullcontext() if lock_held else services.locks.hold(where)
        async with lock:
            now = await services.agent.pending_call(run_id=run_id, tool_call_id=call.tool_call_id)
            if now is None:
                return  # decided meanwhile: its decision shows on the card
            card = await services.cards.extended(card, now.expires_at)
            await show_waiting(services, card, now)
            await _update_reminder(services, card, now)
    finally:
        republish(services, affected)


async def _update_reminder(services: Services, card: PostedCard, call: PendingToolCall) -> None:
    """A reminder posted for the card's old expiry says the call was extended, until when."""
    if call.expires_at is not None:
        text = reminder_extended(card.view, slack_date(call.expires_at))
        await rewrite_reminder(services, card, text)
