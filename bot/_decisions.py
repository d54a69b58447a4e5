"""A click on Approve or Decline → the atomic decision → card updated → the run continues."""

from __future__ import annotations

import logging
from typing import Literal

from slack_sdk.errors import SlackApiError

from agents import AgentStream
from agents.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from bot import _messages as msg
from bot._blocks import CardView, Decision, already_decided_text, as_dicts, decided_card
from bot._blocks import decided_fallback as decided_text
from bot._cards import PostedCard
from bot._payloads import BlockActions
from bot._refs import ApprovalRef
from bot._render import SlackThread, post_run, reporting_failures
from bot._services import Services
from storage import utcnow

logger = logging.getLogger(__name__)

Choice = Literal["approve", "decline"]


async def handle_click(services: Services, click: BlockActions, choice: Choice) -> None:
    """Decide the card's call as the clicking user; losers get an ephemeral note."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    channel, team = click.channel_id, click.team_id
    if ref is None or channel is None or team is None:
        logger.warning("ignoring a click without a valid approval reference")
        return
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    thread_ts = card.thread_ts if card else click.thread_ts
    if thread_ts is None:
        logger.warning("ignoring a click on run %s: the message has no ts", ref.run_id)
        return
    thread = SlackThread(
        team=team,
        channel=channel,
        thread_ts=thread_ts,
        requester=card.view.requester if card else None,
    )
    user = click.user.id
    async with services.locks.hold(thread.thread_id), reporting_failures(services, thread):
        outcome = await _decide_or_refuse(services, click, card, ref, choice)
        if isinstance(outcome, str):
            await _tell(services, channel=channel, user=user, text=outcome, thread_ts=thread_ts)
            return
        decision = Decision(
            kind="approved" if choice == "approve" else "declined", by=user, at=utcnow()
        )
        await _update_card(services, card, ref, decision, channel, click.message_ts)
        await post_run(services, outcome, thread)


async def _tell(services: Services, *, channel: str, user: str, text: str, thread_ts: str) -> None:
    """An ephemeral note to one user; a failure to deliver it is logged, never shown to all."""
    try:
        await services.client.chat_postEphemeral(
            channel=channel, user=user, text=text, thread_ts=thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s in %s: %s", user, channel, exc.response.get("error"))


async def _decide_or_refuse(
    services: Services,
    click: BlockActions,
    card: PostedCard | None,
    ref: ApprovalRef,
    choice: Choice,
) -> AgentStream | str:
    """The continuation stream, or the ephemeral text explaining why nothing happened."""
    user = click.user.id
    refusal = await services.policy.refusal(user=user, team=click.user.team_id, card=card)
    if refusal is not None:
        return refusal
    try:
        return await _decide(services, ref, choice, user)
    except AlreadyDecided as exc:
        return already_decided_text(exc.decision, exc.decided_by, exc.decided_at)
    except ApprovalExpired:
        return msg.EXPIRED
    except FingerprintMismatch:
        return msg.FINGERPRINT_CHANGED
    except (SnapshotNotFound, ToolCallNotSuspended):
        return msg.NO_LONGER_PENDING


async def _decide(services: Services, ref: ApprovalRef, choice: Choice, user: str) -> AgentStream:
    agent = services.agent
    if choice == "approve":
        return await agent.approve_tool_call(
            run_id=ref.run_id,
            tool_call_id=ref.tool_call_id,
            fingerprint=ref.fingerprint,
            decided_by=user,
            source="button",
        )
    return await agent.decline_tool_call(
        run_id=ref.run_id,
        tool_call_id=ref.tool_call_id,
        fingerprint=ref.fingerprint,
        decided_by=user,
        source="button",
    )


async def _update_card(
    services: Services,
    card: PostedCard | None,
    ref: ApprovalRef,
    decision: Decision,
    channel: str,
    clicked_ts: str | None,
) -> None:
    """Show who decided and when, without buttons, in place of the card."""
    view = card.view if card else CardView(ref=ref, tool_name="?", args={})
    ts = card.ts if card else clicked_ts
    if ts is None:
        return
    try:
        await services.client.chat_update(
            channel=card.channel if card else channel,
            ts=ts,
            text=decided_text(view, decision),
            blocks=as_dicts(decided_card(view, decision)),
        )
    except SlackApiError as exc:
        # The decision stands and the run goes on; only the card stays stale.
        logger.warning("could not update card %s: %s", ts, exc.response.get("error"))
