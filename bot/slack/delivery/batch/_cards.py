"""Posting a step's gated calls as batch cards, and drawing a batch card again.

A step with one gated call keeps its own card (``post_card_or_keep``); with several, they are
posted on batch cards of up to ``MAX_BATCH_CALLS`` calls. Each call on a batch card gets its
own card record (so the card index, the expiry sweep, the Home tab, the HTTP API and clicks
find it as any card), naming every call of the message (``PostedCard.batch``). Whatever decides
one of them draws the whole message again from storage: a pending call's row from the call as
it is now, a decided one's from its claim. While Slack does not answer, the calls are kept in
the outbox one card each, as single cards are.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from agents import PendingToolCall
from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.blocks._batch_card import MAX_BATCH_CALLS, BatchRow, batch_card, batch_fallback
from bot.slack.blocks._blocks import as_dicts
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import (
    card_metadata,
    card_view,
    post_card_or_keep,
    record_card,
)
from bot.slack.delivery._card_source import described
from bot.slack.delivery._claimed import decided_of
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery._webclient import redraw
from storage import ClaimRecord

logger = logging.getLogger(__name__)

REPLACING_CLAIMS = frozenset({"edited", "redefined"})
"""Claims that presented the call again on a new card (the old round's claim)."""


async def post_step_cards(
    services: Services, thread: SlackThread, run_id: str, calls: list[PendingToolCall]
) -> int:
    """Post the cards of one step's gated calls; returns how many messages that took."""
    if len(calls) == 1:
        await post_card_or_keep(services, thread, run_id, calls[0])
        return 1
    chunks = [calls[i : i + MAX_BATCH_CALLS] for i in range(0, len(calls), MAX_BATCH_CALLS)]
    for chunk in chunks:
        if len(chunk) == 1:
            await post_card_or_keep(services, thread, run_id, chunk[0])
            continue
        try:
            await _post_batch(services, thread, run_id, chunk)
        except Exception as exc:
            if unavailable(exc) != "slack":
                raise
            services.outages.down("slack", exc)
            for call in chunk:  # kept in the outbox, one card each
                await post_card_or_keep(services, thread, run_id, call)
    return len(chunks)


async def _post_batch(
    services: Services, thread: SlackThread, run_id: str, calls: list[PendingToolCall]
) -> None:
    views = [card_view(services, run_id, call, requester=thread.requester) for call in calls]
    rows = [BatchRow(view=view) for view in views]
    ids = tuple(call.tool_call_id for call in calls)
    response = await services.client.chat_postMessage(
        channel=thread.channel,
        thread_ts=thread.thread_ts,
        text=batch_fallback(rows),
        blocks=as_dicts(batch_card(rows)),
        metadata=card_metadata(run_id, ids[0], ids),
    )
    ts, channel = str(response["ts"]), str(response.get("channel") or thread.channel)
    for view in views:
        posted = PostedCard(
            view=view,
            channel=channel,
            ts=ts,
            thread_ts=thread.thread_ts,
            team=thread.team,
            batch=ids,
        )
        await record_card(services, posted, thread)


async def batch_rows(services: Services, card: PostedCard) -> list[BatchRow]:
    """Every call of ``card``'s batch message as it is now (pending, decided, replaced)."""
    run_id = card.view.ref.run_id
    latest: dict[str, ClaimRecord] = {}
    for one in await services.storage.list_claims(run_id):  # oldest first: keep the last
        if one.tool_call_id is not None:
            latest[one.tool_call_id] = one
    rows = []
    for tool_call_id in card.batch or (card.view.ref.tool_call_id,):
        posted = await services.cards.find(run_id, tool_call_id)
        view = (
            card.view
            if posted is None or tool_call_id == card.view.ref.tool_call_id
            else posted.view
        )
        if posted is not None and posted.ts != card.ts:  # a new card decides it now
            rows.append(BatchRow(view=view, replaced=True))
            continue
        claim = latest.get(tool_call_id)
        if claim is None:
            call = await services.agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
            if call is not None:
                view = replace(described(services, view, call), approved_by=tuple(call.approved_by))
            rows.append(BatchRow(view=view))
        elif claim.decision in REPLACING_CLAIMS:
            rows.append(BatchRow(view=view, replaced=True))
        else:
            rows.append(BatchRow(view=view, decided=decided_of(claim)))
    return rows


async def redraw_batch(services: Services, card: PostedCard) -> None:
    """Draw ``card``'s batch message again as storage has it (a failure is logged: the next
    decision on it, or its expiry, draws it again)."""
    if not card.ts:
        return
    rows = await batch_rows(services, card)
    await redraw(
        services.client,
        channel=card.channel,
        ts=card.ts,
        text=batch_fallback(rows),
        blocks=as_dicts(batch_card(rows)),
        what="batch card",
    )
