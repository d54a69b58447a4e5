""" "Approve all N" / "Decline all N" on a batch card: every call of it still pending, decided
with ``decide_many`` in one transaction, all or nothing.

click → the card's calls as storage has them (under the thread's lock) → the edge's workspace
check for each → ``Agent.decide_many`` (who may decide, expiry, quorum, fingerprints and tool
definitions are checked there, inside the claim) → the batch card drawn again, the run posted
in the thread. A refusal changes nothing and is told to the clicking user alone, naming the
call that was refused (an expired one flips to "Expired" at once, as on a card of its own).
"""

from __future__ import annotations

import logging
from typing import Literal

import bot.slack._messages as msg
from agents import AgentStream, Approve, Decline
from agents.errors import (
    AgentError,
    ApprovalExpired,
    NotAllowedToDecide,
    ToolChanged,
)
from bot.policy import Refusal
from bot.slack._services import Services
from bot.slack.blocks._batch_card import BatchRow, decode_batch_value
from bot.slack.blocks._card import tool_label
from bot.slack.deciding._clicks import Attempt, record_refusal, tell
from bot.slack.deciding._expiry import expire_call
from bot.slack.deciding._told import told
from bot.slack.delivery._render import post_run, reporting_failures
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery.batch._cards import batch_rows, redraw_batch
from bot.slack.delivery.home._publish import affected_viewers, republish
from bot.slack.receiving._payloads import BlockActions
from storage import utcnow

logger = logging.getLogger(__name__)

BATCH_SOURCE = "button"
"""The audit ``source`` of a batch decision: a button, like a card's own."""


async def handle_all(
    services: Services, click: BlockActions, kind: Literal["approve", "decline"]
) -> None:
    """Approve (or decline) every pending call of the clicked batch card as the clicking user;
    afterwards the Home tabs its calls are on (or may be on) are published again."""
    affected = await _affected(services, click)
    try:
        await _decide_all(services, click, kind)
    finally:
        republish(services, affected)  # whatever happened, Home tabs show what still waits


async def _affected(services: Services, click: BlockActions) -> set[str]:
    """The Home viewers a decision on the clicked batch card's calls may change."""
    found = decode_batch_value(click.actions[0].value if click.actions else None)
    if found is None:
        return set()
    run_id, tool_call_id = found
    try:
        card = await services.cards.find(run_id, tool_call_id)
    except Exception:  # the calls are unknown: so is who they affect
        return set(services.home_viewers.users())
    calls = card.batch if card is not None and card.batch else (tool_call_id,)
    return await affected_viewers(services, run_id, calls, by=click.user.id)


async def _decide_all(
    services: Services, click: BlockActions, kind: Literal["approve", "decline"]
) -> None:
    found = decode_batch_value(click.actions[0].value if click.actions else None)
    if found is None or click.channel_id is None or click.team_id is None:
        logger.warning("ignoring a batch click without a valid batch reference")
        return
    run_id, tool_call_id = found
    card = await services.cards.find(run_id, tool_call_id)
    if card is None or not card.batch:
        logger.warning("ignoring a batch click on run %s: no batch card recorded", run_id)
        return
    thread = SlackThread(
        team=card.team,
        channel=card.channel,
        thread_ts=card.thread_ts,
        requester=card.view.requester,
    )
    # Storage or Redis down until the claim: nothing recorded, and the clicking user is told
    # so (``or_not_recorded`` around this work); after it, failures are told in the thread.
    async with services.locks.hold(thread.thread_id):
        rows = await batch_rows(services, card)
        live = [row for row in rows if row.live]
        first = Attempt(
            ref=(live[0] if live else rows[0]).view.ref,
            decision=Approve() if kind == "approve" else Decline(),
            user=click.user.id,
            user_team=click.user.team_id,
            team=card.team,
            channel=click.channel_id,
            message_ts=click.message_ts,
            thread_ts=card.thread_ts,
            source=BATCH_SOURCE,
        )
        if not live:
            await tell(services, first, msg.BATCH_NOTHING_PENDING, card.thread_ts)
            await redraw_batch(services, card)
            return
        refusal = await services.workspace.refusal(  # the clicking user's workspace
            user=first.user, team=first.user_team, card=card, choice=first.choice
        )
        if refusal is not None:
            await record_refusal(services, first, refusal.rule, card.thread_ts)
            await tell(services, first, _refused_text(rows, live[0], refusal.text), card.thread_ts)
            return
        stream = await _claim(services, first, rows, live, kind, thread)
        if stream is None:
            return
        async with reporting_failures(services, thread):
            await redraw_batch(services, card)
            await post_run(services, stream, thread)


async def _claim(
    services: Services,
    first: Attempt,
    rows: list[BatchRow],
    live: list[BatchRow],
    kind: Literal["approve", "decline"],
    thread: SlackThread,
) -> AgentStream | None:
    """``decide_many`` over the live rows; None (the user told why) when it refused."""
    refs = [row.view.ref for row in live]
    decisions: dict[str, Approve | Decline] = {
        ref.tool_call_id: Approve() if kind == "approve" else Decline() for ref in refs
    }
    digests = {r.tool_call_id: r.definition_digest for r in refs if r.definition_digest}
    try:
        return await services.agent.decide_many(
            run_id=refs[0].run_id,
            decisions=decisions,
            decided_by=first.user,
            fingerprints={r.tool_call_id: r.fingerprint for r in refs},
            definition_digests=digests if kind == "approve" else {},
            source=BATCH_SOURCE,
        )
    except AgentError as exc:
        refused_id = getattr(exc, "tool_call_id", None)
        row = next((r for r in rows if r.view.ref.tool_call_id == refused_id), live[0])
        if isinstance(exc, NotAllowedToDecide):
            refusal = Refusal.of(exc)
            await record_refusal(services, first, refusal.rule, thread.thread_ts)
        await tell(services, first, _refused_text(rows, row, told(exc)), thread.thread_ts)
        if isinstance(exc, ApprovalExpired):  # its row flips to "Expired" now
            await expire_call(
                services,
                run_id=row.view.ref.run_id,
                tool_call_id=row.view.ref.tool_call_id,
                thread_id=thread.thread_id,
                now=utcnow(),
                lock_held=True,
            )
        elif isinstance(exc, ToolChanged) and isinstance(exc.stream, AgentStream):
            await post_run(services, exc.stream, thread)  # its new card
            card = await services.cards.find(row.view.ref.run_id, live[0].view.ref.tool_call_id)
            if card is not None and card.batch:
                await redraw_batch(services, card)  # its row: replaced
        return None


def _refused_text(rows: list[BatchRow], row: BatchRow, why: str) -> str:
    number = next(i for i, r in enumerate(rows, start=1) if r is row)
    return msg.BATCH_REFUSED.format(number=number, tool=tool_label(row.view), why=why)
