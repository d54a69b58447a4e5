"""A decision on a pending call, from a button or a modal: authorization → the atomic claim →
card updated → the run continues in the thread. Losers and refused users get an ephemeral.

``Attempt`` is what every entry point (button click, decline / edit / provide modal) reduces
to; ``decide`` does the rest, holding the Slack thread's lock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError

import bot.slack._audit as _audit
import bot.slack._messages as msg
from agents import AgentStream
from agents.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    SnapshotNotFound,
    ToolCallNotSuspended,
)
from bot.slack._blocks import (
    CardView,
    Decision,
    already_decided_text,
    answered_question,
    as_dicts,
    decided_card,
    question_fallback,
)
from bot.slack._blocks import decided_fallback as decided_text
from bot.slack._cards import PostedCard
from bot.slack._ids import thread_id
from bot.slack._payloads import BlockActions
from bot.slack._policy import Choice, Refusal
from bot.slack._refs import ApprovalRef
from bot.slack._render import SlackThread, post_run, reporting_failures
from bot.slack._services import Services
from storage import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One person's attempt to decide a pending call."""

    ref: ApprovalRef
    choice: Choice
    user: str
    user_team: str | None
    """The clicking user's workspace (Slack Connect users have another one)."""
    team: str
    """The workspace of the thread."""
    channel: str
    message_ts: str | None
    """The card (or question) message."""
    thread_ts: str | None
    source: str
    """``button`` or ``modal`` (recorded with the decision)."""
    reason: str | None = None
    """Decline reason."""
    data: dict[str, Any] | None = None
    """Edited arguments (``edit``) or resume data (``provide``)."""
    question: tuple[str, dict[str, Any] | None] | None = None
    """``provide``: the tool name and suspend payload of the question, to show it answered."""


def attempt_from_click(click: BlockActions, choice: Choice) -> Attempt | None:
    """The ``Attempt`` a button click makes; None when the click is not one of ours."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    if ref is None or click.channel_id is None or click.team_id is None:
        return None
    return Attempt(
        ref=ref,
        choice=choice,
        user=click.user.id,
        user_team=click.user.team_id,
        team=click.team_id,
        channel=click.channel_id,
        message_ts=click.message_ts,
        thread_ts=click.thread_ts,
        source="button",
    )


async def handle_click(services: Services, click: BlockActions, choice: Choice) -> None:
    """Approve (or decline without a reason) as the clicking user."""
    attempt = attempt_from_click(click, choice)
    if attempt is None:
        logger.warning("ignoring a click without a valid approval reference")
        return
    await decide(services, attempt)


async def decide(services: Services, attempt: Attempt) -> None:
    """Authorize, claim, update the card, and post the continuation in the thread."""
    ref = attempt.ref
    card = await services.cards.find(ref.run_id, ref.tool_call_id)
    thread_ts = card.thread_ts if card else attempt.thread_ts
    if thread_ts is None:
        logger.warning("ignoring a decision on run %s: no thread", ref.run_id)
        return
    thread = SlackThread(
        team=attempt.team,
        channel=attempt.channel,
        thread_ts=thread_ts,
        requester=card.view.requester if card else None,
    )
    async with services.locks.hold(thread.thread_id), reporting_failures(services, thread):
        refusal = await check(services, attempt, card)
        if refusal is not None:
            await tell(services, attempt, refusal.text, thread_ts)
            return
        outcome = await _decide(services, attempt)
        if isinstance(outcome, str):
            await tell(services, attempt, outcome, thread_ts)
            return
        if attempt.choice != "provide":
            await _update_card(services, card, attempt)
        elif attempt.question is not None and attempt.message_ts is not None:
            await _update_question(services, attempt, attempt.question, attempt.message_ts)
        await post_run(services, outcome, thread)


async def check(services: Services, attempt: Attempt, card: PostedCard | None) -> Refusal | None:
    """The policy's refusal, recorded in the audit log (``kind="refused"``), or None."""
    refusal = await services.policy.refusal(
        user=attempt.user, team=attempt.user_team, card=card, choice=attempt.choice
    )
    if refusal is None:
        return None
    where = card.thread_ts if card else attempt.thread_ts
    await _audit.record(
        services.storage,
        _audit.REFUSED,
        run_id=attempt.ref.run_id,
        tool_call_id=attempt.ref.tool_call_id,
        actor=attempt.user,
        source=attempt.source,
        thread_id=thread_id(attempt.team, attempt.channel, where) if where else None,
        agent_id=services.agent.id,
        data={
            "rule": refusal.rule,
            "choice": attempt.choice,
            "channel": attempt.channel,
            "message_ts": attempt.message_ts,
            "user_team": attempt.user_team,
        },
    )
    logger.info("refused %s by %s: %s", attempt.choice, attempt.user, refusal.rule)
    return refusal


async def tell(services: Services, attempt: Attempt, text: str, thread_ts: str | None) -> None:
    """An ephemeral note to one user; a failure to deliver it is logged, never shown to all."""
    try:
        await services.client.chat_postEphemeral(
            channel=attempt.channel, user=attempt.user, text=text, thread_ts=thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", attempt.user, exc.response.get("error"))


async def _decide(services: Services, attempt: Attempt) -> AgentStream | str:
    """The continuation stream, or the ephemeral text explaining why nothing happened."""
    try:
        return await _claim(services, attempt)
    except ApprovalExpired:
        return msg.EXPIRED
    except AlreadyDecided as exc:
        return already_decided_text(exc.decision, exc.decided_by, exc.decided_at)
    except FingerprintMismatch:
        return msg.FINGERPRINT_CHANGED
    except (InvalidToolArgs, InvalidResumeData):
        return msg.INVALID_DATA
    except (SnapshotNotFound, ToolCallNotSuspended):
        return msg.NO_LONGER_PENDING


async def _claim(services: Services, attempt: Attempt) -> AgentStream:
    agent, ref = services.agent, attempt.ref
    common: dict[str, Any] = {
        "run_id": ref.run_id,
        "tool_call_id": ref.tool_call_id,
        "decided_by": attempt.user,
        "source": attempt.source,
    }
    if attempt.choice == "provide":
        return await agent.resume_stream(attempt.data or {}, **common)
    if attempt.choice == "decline":
        return await agent.decline_tool_call(
            fingerprint=ref.fingerprint, reason=attempt.reason, **common
        )
    args = attempt.data if attempt.choice == "edit" else None
    return await agent.approve_tool_call(fingerprint=ref.fingerprint, args=args, **common)


async def _update_card(services: Services, card: PostedCard | None, attempt: Attempt) -> None:
    """Show who decided, when (and the edited arguments), without buttons."""
    decision = Decision(
        kind="declined" if attempt.choice == "decline" else "approved",
        by=attempt.user,
        at=utcnow(),
        reason=attempt.reason,
        approved_args=attempt.data if attempt.choice == "edit" else None,
    )
    view = card.view if card else CardView(ref=attempt.ref, tool_name="?", args={})
    channel = card.channel if card else attempt.channel
    ts = card.ts if card else attempt.message_ts
    if ts is not None:
        await update_card(services, channel, ts, view, decision)


async def _update_question(
    services: Services,
    attempt: Attempt,
    question: tuple[str, dict[str, Any] | None],
    ts: str,
) -> None:
    """The question without its button, saying who provided the details."""
    tool, payload = question
    try:
        await services.client.chat_update(
            channel=attempt.channel,
            ts=ts,
            text=question_fallback(tool, payload),
            blocks=as_dicts(answered_question(tool, payload, attempt.user, utcnow())),
        )
    except SlackApiError as exc:
        logger.warning("could not update question %s: %s", ts, exc.response.get("error"))


async def update_card(
    services: Services, channel: str, ts: str, view: CardView, decision: Decision
) -> None:
    """Replace a card by its decided form; a failure leaves it stale (logged), nothing else."""
    try:
        await services.client.chat_update(
            channel=channel,
            ts=ts,
            text=decided_text(view, decision),
            blocks=as_dicts(decided_card(view, decision)),
        )
    except SlackApiError as exc:
        logger.warning("could not update card %s: %s", ts, exc.response.get("error"))
