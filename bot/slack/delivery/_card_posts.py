"""Approval cards posted in their thread: at once, kept in the outbox while Slack does not answer,
and recovered when a call pends with no card at all; a card's reminder rewritten when what it
says no longer holds (``rewrite_reminder``).

Every card message carries its call in Slack message ``metadata`` (``countersign_card``: run id
and tool call id). Before a kept or recovered card is posted, its thread is read for it, so a
card that did reach Slack (the process died before recording it, or storage failed after the
post) is recorded, not posted twice. A call that has pended for ``LOST_AFTER_SECONDS`` without a
card record (its process died between storing the call and posting the card) is given one,
once across instances (a mark in storage), through the outbox.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from slack_sdk.errors import SlackApiError

from agents import PendingToolCall, ToolCallApprovalChunk
from bot.ops._outage import unavailable, waiting_out
from bot.slack._services import Services
from bot.slack.blocks._blocks import CardView, approval_card, approval_fallback, as_dicts
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.blocks._reminders import reminder_key
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_source import described
from bot.slack.delivery._outbox import (
    KeptCard,
    SlackWrite,
    enqueue,
    new_write,
)
from bot.slack.delivery._thread import SlackThread

logger = logging.getLogger(__name__)

CARD_EVENT = "countersign_card"
"""``metadata.event_type`` of every approval card (``event_payload``: its run and call)."""
LOST_AFTER_SECONDS = 30.0
"""A call pending this long without a card record is given its card (posting one takes
milliseconds after the call is stored)."""
LOST_WITHIN = timedelta(minutes=10)
RECORD_WAIT_SECONDS = 600.0
"""How long recording a posted card waits through a storage outage."""
_THREAD_PAGE = 200
"""Only calls stored this recently are looked at (older ones were looked at already)."""


def card_metadata(run_id: str, tool_call_id: str, batch: tuple[str, ...] = ()) -> dict[str, Any]:
    """The metadata a call's card carries (a batch card: every call on it, in ``calls``)."""
    payload: dict[str, Any] = {"run_id": run_id, "call": tool_call_id}
    if batch:
        payload["calls"] = list(batch)
    return {"event_type": CARD_EVENT, "event_payload": payload}


async def card_in_thread(
    services: Services, thread: SlackThread, run_id: str, tool_call_id: str
) -> tuple[str, tuple[str, ...]] | None:
    """The ts of the card (or batch card) of a call already in its thread, with the calls of
    the batch card it is on (empty for a card of its own); None when there is none."""
    replies = await services.client.conversations_replies(
        channel=thread.channel, ts=thread.thread_ts, include_all_metadata=True, limit=_THREAD_PAGE
    )
    for message in replies.get("messages") or []:
        metadata = message.get("metadata") or {}
        payload = metadata.get("event_payload") or {}
        if metadata.get("event_type") != CARD_EVENT or payload.get("run_id") != run_id:
            continue
        calls = tuple(str(c) for c in payload.get("calls") or ())
        if payload.get("call") == tool_call_id or tool_call_id in calls:
            return str(message.get("ts")), calls
    return None


async def record_card(
    services: Services, card: PostedCard, thread: SlackThread, agent_id: str | None = None
) -> None:
    """Record a card just posted, waiting out a storage outage: a card in Slack without its
    record would be posted again (as a lost card) and decided from a card nobody recorded.
    ``agent_id``: the agent whose run the card's call is (default: the main one)."""
    owner = agent_id or services.agent.id
    await waiting_out(
        services.outages,
        lambda: services.cards.record(card, thread_id=thread.thread_id, agent_id=owner),
        services=("storage",),
        seconds=RECORD_WAIT_SECONDS,
    )


async def post_card(
    services: Services, thread: SlackThread, approval: ToolCallApprovalChunk
) -> None:
    """Post an approval card in the thread and record where it is (built from the chunk
    alone: it carries every field of the pending call, so nothing is read again)."""
    await post_card_for(services, thread, approval.run_id, approval.pending_call())


async def post_card_for(
    services: Services,
    thread: SlackThread,
    run_id: str,
    call: PendingToolCall,
    *,
    posted_ts: str | None = None,
) -> None:
    """Post the card of ``call`` (or, with ``posted_ts``, only record the one already posted
    there) and record where it is; the message carries ``card_metadata`` of the call."""
    view = card_view(services, run_id, call, requester=thread.requester)
    ts = posted_ts
    channel = thread.channel
    if ts is None:
        response = await services.client.chat_postMessage(
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            text=approval_fallback(view),
            blocks=as_dicts(approval_card(view)),
            metadata=card_metadata(run_id, call.tool_call_id),
        )
        ts, channel = str(response["ts"]), str(response.get("channel") or thread.channel)
    posted = PostedCard(
        view=view, channel=channel, ts=ts, thread_ts=thread.thread_ts, team=thread.team
    )
    agent_id = call.agent_path[0] if call.agent_path else None
    await record_card(services, posted, thread, agent_id)


def card_view(
    services: Services, run_id: str, call: PendingToolCall, *, requester: str | None
) -> CardView:
    """What the card of a pending call shows (also on the Home tab, for a call with no card)."""
    view = CardView(
        ref=ApprovalRef(
            run_id=run_id,
            tool_call_id=call.tool_call_id,
            fingerprint=call.fingerprint,
            definition_digest=call.definition_digest,
        ),
        tool_name=call.tool_name,
        args=call.args,
        requester=requester,
        agent_path=tuple(call.agent_path),
        grantable=call.grantable,
    )
    return described(services, view, call)


async def post_card_or_keep(
    services: Services, thread: SlackThread, run_id: str, call: PendingToolCall
) -> None:
    """``post_card_for``; while Slack does not answer, the card is kept in the outbox and
    posted once Slack answers again (a pending call never goes without its card)."""
    try:
        await post_card_for(services, thread, run_id, call)
    except Exception as exc:
        if unavailable(exc) != "slack":
            raise
        services.outages.down("slack", exc)
        card = KeptCard(
            team=thread.team,
            requester=thread.requester,
            run_id=run_id,
            tool_call_id=call.tool_call_id,
        )
        await enqueue(
            services,
            new_write(
                method="card",
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                text="",
                card=card,
            ),
        )


async def make_kept_card(services: Services, write: SlackWrite) -> None:
    """The outbox's ``make_card``: the card of a call kept while Slack was down (or recovered),
    posted from the call as it is now (nothing when it was decided meanwhile: its outcome is
    posted when it is shown), or only recorded when its card is in the thread already."""
    card = write.card
    assert card is not None and write.thread_ts is not None
    call = await services.agent.pending_call(run_id=card.run_id, tool_call_id=card.tool_call_id)
    if call is None:
        return
    thread = SlackThread(
        team=card.team, channel=write.channel, thread_ts=write.thread_ts, requester=card.requester
    )
    found = await card_in_thread(services, thread, card.run_id, card.tool_call_id)
    if found is not None and found[1]:  # on a batch card already: recorded as its row
        await record_batch(services, thread, card.run_id, found[0], found[1])
        return
    posted_ts = found[0] if found is not None else None
    await post_card_for(services, thread, card.run_id, call, posted_ts=posted_ts)


async def record_batch(
    services: Services, thread: SlackThread, run_id: str, ts: str, calls: tuple[str, ...]
) -> None:
    """Record every call still pending of the batch card ``ts`` (found in its thread after its
    records were lost): one batch card, never a card per call."""
    for tool_call_id in calls:
        pending = await services.agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
        if pending is None:
            continue
        view = card_view(services, run_id, pending, requester=thread.requester)
        posted = PostedCard(
            view=view,
            channel=thread.channel,
            ts=ts,
            thread_ts=thread.thread_ts,
            team=thread.team,
            batch=calls,
        )
        await record_card(services, posted, thread)


async def recover_lost_card(
    services: Services,
    *,
    run_id: str,
    thread_id: str | None,
    call: PendingToolCall,
    since: datetime,
    now: datetime,
) -> bool:
    """Give a call that pends without any card its card (through the outbox), once across
    instances; True when this instance did. Cheap for every other call: it looks only at calls
    stored between ``LOST_WITHIN`` and ``LOST_AFTER_SECONDS`` ago."""
    age = now - since
    if not (timedelta(seconds=LOST_AFTER_SECONDS) <= age <= LOST_WITHIN) or thread_id is None:
        return False
    thread = SlackThread.of(thread_id, call.requested_by)
    if thread is None or await services.cards.find(run_id, call.tool_call_id) is not None:
        return False
    mark = f"slack:lost-card:{run_id}:{call.tool_call_id}"
    if not await services.storage.add_if_absent(mark, "1", 2 * LOST_WITHIN.total_seconds()):
        return False  # another instance gives it its card
    logger.warning(
        "the call %s of run %s has pended %ds without a card (its process stopped before "
        "posting it?): posting its card now",
        call.tool_call_id,
        run_id,
        age.total_seconds(),
    )
    kept = KeptCard(
        team=thread.team, requester=thread.requester, run_id=run_id, tool_call_id=call.tool_call_id
    )
    await enqueue(
        services,
        new_write(
            method="card", channel=thread.channel, thread_ts=thread.thread_ts, text="", card=kept
        ),
    )
    return True


async def rewrite_reminder(services: Services, card: PostedCard, text: str) -> None:
    """The reminder posted for ``card``'s call (if any) says ``text`` instead."""
    ref = card.view.ref
    ts = await services.storage.get_value(reminder_key(ref.run_id, ref.tool_call_id))
    if not ts:
        return
    try:
        await services.client.chat_update(channel=card.channel, ts=ts, text=text)
    except SlackApiError as exc:
        logger.warning("could not update reminder %s: %s", ts, exc.response.get("error"))
