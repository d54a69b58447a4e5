"""A pending approval past its ``expires_at``, expired and shown: the runtime's ``Expire`` (the
model is told the action did not run), an ``expired`` audit event, the card flipped to
"⌛ Expired" without buttons and its reminder updated (``show_decided``).

Two callers: the expiry sweep, for every call due, and a click (or modal) that comes after
``expires_at``: the runtime refuses it (``ApprovalExpired``) and the card flips at once, so it
never keeps live buttons once nobody can approve it. Several instances may both try: the expiry
is the same atomic claim as a click, so only one of them expires the call and shows it.

``ask_again``: the expired card's "Ask again" (SPEC 12 round 4). Only the call's requester may
use it; it presents the same call (tool, arguments) anew as the first step of a new run in
the thread, gated like any call the model makes (a new card, a new TTL), and the expired card
says it was asked again below. Once per call across clicks and instances (a mark in storage).

``extend_card``: a pending card's "Extend" (SPEC 12 round 4), on the card or the Home tab.
Whoever may approve the call may (the runtime's authority check, ``Agent.extend_tool_call``; the
clicking user's workspace as for Approve); the call is shown with its new expiry under the
thread's lock (so a decision shown meanwhile is never drawn back as pending: ``show_extension``)
and the clicker told until when; anyone else gets a private note. A call in no Slack thread is
told on the clicker's Home tab.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from datetime import datetime

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import MarkdownTextObject, SectionBlock

import bot.slack._messages as msg
import bot.slack.deciding._audit as _audit
from agents import Expire, PendingToolCall, ToolCallRecord
from agents.errors import (
    AgentError,
    AlreadyDecided,
    CannotExtend,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from bot._errors import answer_of
from bot.slack._ids import thread_id as thread_id_of
from bot.slack._services import Services
from bot.slack.blocks._blocks import Decided, as_dicts, decided_fallback
from bot.slack.blocks._card import slack_date
from bot.slack.blocks._decided_card import decided_card
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.deciding._clicked_card import Clicked, card_from_call
from bot.slack.deciding._conversation import slack_context
from bot.slack.deciding._told import told
from bot.slack.deciding._unrecorded import Asker, tell_asker
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._claimed import stored_outcome
from bot.slack.delivery._extended import show_extension
from bot.slack.delivery._render import post_run, reporting_failures
from bot.slack.delivery._shown import may_ask_again, show_decided
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery.home._listing import UNTHREADED, card_click
from bot.slack.receiving._payloads import BlockActions

logger = logging.getLogger(__name__)


async def expire_call(
    services: Services,
    *,
    run_id: str,
    tool_call_id: str,
    thread_id: str | None,
    now: datetime,
    call: PendingToolCall | None = None,
    since: datetime | None = None,
    card: PostedCard | None = None,
    lock_held: bool = False,
) -> bool:
    """Expire the call and show it; False when it was decided meanwhile (nothing done).

    ``call``: the pending call as the caller read it (else read here, for the audit's window);
    ``since``: when it started waiting, when the call does not say; ``lock_held``: the caller
    holds the thread's lock (a click does)."""
    if call is None:
        call = await services.agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
        if call is None:
            return False  # decided meanwhile, here or by another instance
    try:
        stream = await services.agent.decide(
            Expire(),
            run_id=run_id,
            tool_call_id=tool_call_id,
            decided_by=_audit.SYSTEM,
            source="expiry",
        )
    except (AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended):
        return False  # decided meanwhile, here or by another instance
    card = card or await services.cards.find(run_id, tool_call_id)
    since = call.suspended_at or since
    expires_at = call.expires_at
    await _audit.record(
        services.storage,
        _audit.EXPIRED,
        run_id=run_id,
        tool_call_id=tool_call_id,
        actor=_audit.SYSTEM,
        source="expiry",
        thread_id=thread_id,
        agent_id=(await services.agent.agent_of(run_id)).id,
        data={
            "pending_since": since.isoformat() if since else None,
            "expires_at": expires_at.isoformat() if expires_at else None,
            "ttl_seconds": (expires_at - since).total_seconds() if expires_at and since else None,
            "channel": card.channel if card else None,
            "message_ts": card.ts if card else None,
        },
    )
    logger.info("expired tool call %s of run %s", tool_call_id, run_id)
    if card is None:
        await stream.result()  # not shown in Slack: let the run finish
        return True
    await show_decided(
        services,
        Expire(),
        run_id=run_id,
        tool_call_id=tool_call_id,
        by=None,
        at=expires_at or now,
        stream=stream,
        card=card,
        lock_held=lock_held,
    )
    return True


async def ask_again(services: Services, click: BlockActions) -> None:
    """After the click's ack: the expired call of the clicked card, presented anew by its
    requester (anyone else is told only the requester may), once."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    card = None if ref is None else await services.cards.find(ref.run_id, ref.tool_call_id)
    if ref is None or card is None or not may_ask_again(services, card.view):
        logger.warning("ignoring an Ask again click without an expired card of ours")
        return
    user = click.user.id
    if user != card.view.requester:
        await _tell(services, card, user, msg.REFUSED_ASK_AGAIN)
        return
    decided = await stored_outcome(services.storage, ref.run_id, ref.tool_call_id)
    if decided is None or decided.kind != "expire":
        logger.warning("ignoring Ask again on call %s: it did not expire", ref.tool_call_id)
        return
    if not await services.dedupe.first_event(f"ask-again:{ref.run_id}:{ref.tool_call_id}"):
        return  # asked again already (a double click, another instance)
    await _mark_asked_again(services, card, decided)
    thread = SlackThread(
        team=card.team, channel=card.channel, thread_ts=card.thread_ts, requester=user
    )
    again = ToolCallRecord(
        tool_call_id=f"again_{uuid.uuid4().hex[:24]}",
        tool_name=card.view.tool_name,
        args=dict(card.view.args),
    )
    text = msg.ASKED_AGAIN.format(user=user)
    async with reporting_failures(services, thread), services.locks.hold(thread.thread_id):
        stream = await services.agent.stream(
            text,
            thread_id=thread.thread_id,
            resource_id=thread.resource_id,
            request_context=slack_context(thread),
            requested_by=user,
            decided_by=user,
            propose_call=again,
        )
        await post_run(services, stream, thread, answered_by=user)


async def extend_card(services: Services, click: BlockActions) -> None:
    """After the click's ack: the clicked call kept decidable for longer by the clicking user
    and shown with its new expiry (``show_extension``); what it came to, or why not, is told
    to them alone: an ephemeral by the card, or a note on their Home tab for a call in no
    Slack thread. A click on the Home tab is one on the call's card (posted now when it has
    none in its thread), as for Approve."""
    if click.channel_id is None:  # from the Home tab
        on_card = await card_click(services, click)
        click = on_card if on_card is not None else click
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    if ref is None or click.channel_id is None:
        logger.warning("ignoring an Extend click without a valid approval reference")
        return
    user = click.user.id
    card = await _extended_card(services, ref, click)
    asker = Asker(
        user=user,
        channel=card.channel if card else click.channel_id,
        thread_ts=card.thread_ts if card else click.thread_ts,
    )
    refusal = await services.workspace.refusal(
        user=user, team=click.user.team_id, card=card, choice="approve"
    )
    if refusal is not None:
        await tell_asker(services, asker, refusal.text)
        return
    held = (
        services.locks.hold(thread_id_of(card.team, card.channel, card.thread_ts))
        if card is not None
        else contextlib.nullcontext()
    )
    async with held:
        try:
            call = await services.agent.extend_tool_call(
                run_id=ref.run_id, tool_call_id=ref.tool_call_id, by=user, source="button"
            )
        except CannotExtend as exc:
            await tell_asker(services, asker, msg.CANNOT_EXTEND.format(why=exc.reason))
            return
        except AgentError as exc:
            if answer_of(exc).kind in ("failed", "bad-request"):
                raise
            await tell_asker(services, asker, told(exc))
            return
        await show_extension(
            services, ref.run_id, call, by=user, card=card, lock_held=card is not None
        )
    logger.info("extended tool call %s of run %s", ref.tool_call_id, ref.run_id)
    if call.expires_at is not None:
        when = slack_date(call.expires_at)
        text = (
            msg.HOME_EXTENDED.format(tool=call.tool_name, when=when)
            if asker.channel == UNTHREADED
            else msg.EXTENDED.format(when=when)
        )
        await tell_asker(services, asker, text)


async def _extended_card(
    services: Services, ref: ApprovalRef, click: BlockActions
) -> PostedCard | None:
    """The card of the clicked call: its record, else the clicked message drawn from the call
    and recorded (``card_from_call``); None for a click on the Home tab alone (no thread)."""
    if click.channel_id in (None, UNTHREADED) or click.team_id is None:
        return None
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    if card is not None:
        return card
    where = Clicked(
        team=click.team_id,
        channel=click.channel_id,
        message_ts=click.message_ts,
        thread_ts=click.thread_ts,
    )
    return await card_from_call(services, ref, where)


async def _mark_asked_again(services: Services, card: PostedCard, decided: Decided) -> None:
    """The expired card without its button, saying the call was asked again below."""
    blocks = decided_card(card.view, decided)
    blocks.append(SectionBlock(text=MarkdownTextObject(text=msg.ASKED_AGAIN_BELOW)))
    try:
        await services.client.chat_update(
            channel=card.channel,
            ts=card.ts,
            text=decided_fallback(card.view, decided),
            blocks=as_dicts(blocks),
        )
    except SlackApiError as exc:
        logger.warning("could not update expired card %s: %s", card.ts, exc.response.get("error"))


async def _tell(services: Services, card: PostedCard, user: str, text: str) -> None:
    try:
        await services.client.chat_postEphemeral(
            channel=card.channel, user=user, text=text, thread_ts=card.thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", user, exc.response.get("error"))
