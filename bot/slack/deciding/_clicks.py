"""A decision on a pending call, from a button or a modal: the edge's workspace check → the
runtime's decision (who may decide and expiry are checked there, inside the claim) → shown in
Slack (``show_decided``). Losers and refused users get an ephemeral; refusals are audited.

``Attempt`` is what every entry point (button click, decline / edit / provide modal) reduces
to: who, where, and the runtime's ``Decision``; ``decide`` does the rest, holding the Slack
thread's lock.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
import bot.slack.deciding._audit as _audit
from agents import (
    AgentStream,
    Approve,
    Decision,
    DecisionRequest,
    Decline,
)
from agents.errors import (
    NOT_REQUESTER_RULE,
    AgentError,
    ApprovalExpired,
    NotAllowedToDecide,
    ToolChanged,
)
from bot._errors import answer_of
from bot.ops._outage import Service
from bot.policy import Refusal
from bot.slack._ids import thread_id
from bot.slack._services import Services
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.deciding._clicked_card import Clicked, card_from_call, unrecorded_card
from bot.slack.deciding._expiry import expire_call
from bot.slack.deciding._told import told
from bot.slack.deciding._unrecorded import Asker, recording_outage, tell_not_recorded
from bot.slack.deciding._workspace import Choice, choice_of
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._render import post_run
from bot.slack.delivery._shown import show_decided, show_replaced
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery.home._listing import UNTHREADED
from bot.slack.delivery.home._publish import affected_viewers, publish_home, republish
from bot.slack.receiving._payloads import BlockActions
from storage import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One person's attempt to decide a pending call."""

    ref: ApprovalRef
    decision: Decision
    """What the user decides (``Approve`` with ``args``: approve with edited arguments)."""
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
    question: tuple[str, dict[str, Any] | None] | None = None
    """``Resume``: the tool name and suspend payload of the question, to show it answered."""

    @property
    def request(self) -> DecisionRequest:
        """The runtime's one value for this attempt: the call as the card showed it (a question
        is answered whatever its arguments: no fingerprint), who decides, and from where."""
        ref = self.ref
        return DecisionRequest(
            run_id=ref.run_id,
            tool_call_id=ref.tool_call_id,
            fingerprint=None if self.decision.kind == "resume" else ref.fingerprint,
            decided_by=self.user,
            definition_digest=ref.definition_digest if self.decision.kind == "approve" else None,
            source=self.source,
        )

    @property
    def choice(self) -> Choice:
        """What the decision is, in the policy's terms (who may do what)."""
        return choice_of(self.decision)


def attempt_from_click(click: BlockActions, decision: Decision) -> Attempt | None:
    """The ``Attempt`` a button click makes; None when the click is not one of ours."""
    ref = ApprovalRef.decode(click.actions[0].value if click.actions else None)
    if ref is None or click.channel_id is None or click.team_id is None:
        return None
    return Attempt(
        ref=ref,
        decision=decision,
        user=click.user.id,
        user_team=click.user.team_id,
        team=click.team_id,
        channel=click.channel_id,
        message_ts=click.message_ts,
        thread_ts=click.thread_ts,
        source="button",
    )


async def handle_click(services: Services, click: BlockActions) -> None:
    """Approve as the clicking user."""
    attempt = attempt_from_click(click, Approve())
    if attempt is None:
        logger.warning("ignoring a click without a valid approval reference")
        return
    await decide(services, attempt)


async def handle_withdraw(services: Services, click: BlockActions) -> None:
    """Withdraw as the clicking user: the runtime refuses anyone but the call's requester."""
    attempt = attempt_from_click(click, Decline(withdrawn=True))
    if attempt is None:
        logger.warning("ignoring a click without a valid approval reference")
        return
    await decide(services, attempt)


async def decide(services: Services, attempt: Attempt) -> None:
    """Authorize, claim, and show the decision in Slack (card, then the run in the thread).

    When storage or Redis cannot be reached before the decision is recorded, the user gets an
    ephemeral saying nothing was changed (``NOT_RECORDED``) and the outage is logged once.
    Afterwards the Home tabs the call is on (or may be on) are published again.
    """
    ref = attempt.ref
    affected = await affected_viewers(services, ref.run_id, (ref.tool_call_id,), by=attempt.user)
    try:
        if attempt.channel == UNTHREADED:
            await _decide_unthreaded(services, attempt)
        else:
            await _decide_recorded(services, attempt)
    finally:
        republish(services, affected)  # whatever happened, Home tabs show what still waits


async def _decide_recorded(services: Services, attempt: Attempt) -> None:
    ref = attempt.ref
    outage = _Outage()
    async with contextlib.AsyncExitStack() as held:
        async with recording(outage):
            card = await services.cards.find(ref.run_id, ref.tool_call_id)
            if card is None:  # posted, its record lost (storage failed, a process died)
                card = await card_from_call(services, attempt.ref, _where(attempt))
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
            await held.enter_async_context(services.locks.hold(thread.thread_id))
            refusal = await check(services, attempt, card)
            outcome = None if refusal is not None else await _decide(services, attempt, thread_ts)
        if outage.service is not None:
            asker = Asker(user=attempt.user, channel=attempt.channel, thread_ts=attempt.thread_ts)
            await tell_not_recorded(services, asker, outage.service, outage.cause or "down")
            return
        if refusal is not None:
            await tell(services, attempt, refusal.text, thread_ts)
            return
        assert outcome is not None
        if isinstance(outcome, str):
            await tell(services, attempt, outcome, thread_ts)
            return
        if isinstance(outcome, ToolChanged):
            await _present_changed(services, attempt, outcome, card, thread)
            return
        if isinstance(outcome, _TooLate):  # refused; the card flips to "Expired" now
            await tell(services, attempt, msg.EXPIRED, thread_ts)
            await expire_call(
                services,
                run_id=ref.run_id,
                tool_call_id=ref.tool_call_id,
                thread_id=thread.thread_id,
                now=utcnow(),
                card=card,
                lock_held=True,
            )
            return
        await show_decided(  # reports its own failures in the thread
            services,
            attempt.decision,
            run_id=ref.run_id,
            tool_call_id=ref.tool_call_id,
            by=attempt.user,
            at=utcnow(),
            stream=outcome,
            card=card or unrecorded_card(attempt.ref, _where(attempt), attempt.question, thread),
            lock_held=True,
        )


async def _decide_unthreaded(services: Services, attempt: Attempt) -> None:
    """A decision from the Home tab on a call in no Slack thread (its run was started through
    the API or a script): claimed like any other, told on the Home tab; the run goes on by
    itself (nothing to post it in)."""
    ref = attempt.ref
    call = await services.agent.pending_call(run_id=ref.run_id, tool_call_id=ref.tool_call_id)
    refusal = await check(services, attempt, None)
    outcome = refusal.text if refusal is not None else await _decide(services, attempt, None)
    if isinstance(outcome, str):
        await tell(services, attempt, outcome, None)
    elif isinstance(outcome, ToolChanged):
        await tell(services, attempt, msg.TOOL_CHANGED, None)
    elif isinstance(outcome, _TooLate):
        await tell(services, attempt, msg.EXPIRED, None)
        await expire_call(
            services,
            run_id=ref.run_id,
            tool_call_id=ref.tool_call_id,
            thread_id=None,
            now=utcnow(),
            call=call,
        )
    else:
        what = msg.HOME_RECORDED_WHAT.get(attempt.choice, attempt.choice)
        tool = call.tool_name if call is not None else "?"
        await tell(services, attempt, msg.HOME_RECORDED.format(what=what, tool=tool), None)


@dataclass(frozen=True)
class _TooLate:
    """The call's ``expires_at`` passed before this decision (``ApprovalExpired``)."""


@dataclass
class _Outage:
    """Storage or Redis failed before the decision was recorded: nothing changed."""

    service: Service | None = None
    cause: BaseException | None = None


@contextlib.asynccontextmanager
async def recording(outage: _Outage) -> AsyncIterator[None]:
    """Record a storage or Redis outage in ``outage`` (and stop there); anything else goes on."""
    try:
        yield
    except Exception as exc:
        service = recording_outage(exc)
        if service is None:
            raise
        outage.service, outage.cause = service, exc


async def check(services: Services, attempt: Attempt, card: PostedCard | None) -> Refusal | None:
    """The edge's refusal (the clicking user's workspace), audited, or None."""
    refusal = await services.workspace.refusal(
        user=attempt.user, team=attempt.user_team, card=card, choice=attempt.choice
    )
    if refusal is not None:
        await record_refusal(services, attempt, refusal.rule, card.thread_ts if card else None)
    return refusal


async def record_refusal(
    services: Services, attempt: Attempt, rule: str, thread_ts: str | None
) -> None:
    """Audit a refused attempt (``kind="refused"``, with the rule)."""
    where = thread_ts or attempt.thread_ts
    await _audit.record(
        services.storage,
        _audit.REFUSED,
        run_id=attempt.ref.run_id,
        tool_call_id=attempt.ref.tool_call_id,
        actor=attempt.user,
        source=attempt.source,
        thread_id=thread_id(attempt.team, attempt.channel, where) if where else None,
        agent_id=(await services.agent.agent_of(attempt.ref.run_id)).id,
        data={
            "rule": rule,
            "choice": attempt.choice,
            "channel": attempt.channel,
            "message_ts": attempt.message_ts,
            "user_team": attempt.user_team,
        },
    )
    logger.info("refused %s by %s: %s", attempt.choice, attempt.user, rule)


async def tell(services: Services, attempt: Attempt, text: str, thread_ts: str | None) -> None:
    """An ephemeral note to one user (on their Home tab for a call in no Slack thread); a
    failure to deliver it is logged, never shown to all."""
    if attempt.channel == UNTHREADED:
        services.home_viewers.tell(attempt.user, text)
        await publish_home(services, attempt.user)
        return
    try:
        await services.client.chat_postEphemeral(
            channel=attempt.channel, user=attempt.user, text=text, thread_ts=thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", attempt.user, exc.response.get("error"))


async def _decide(
    services: Services, attempt: Attempt, thread_ts: str | None
) -> AgentStream | ToolChanged | str | _TooLate:
    """The continuation stream, the call presented again (its tool changed), the ephemeral
    text explaining why nothing happened, or ``_TooLate``: the call expired (its card is to be
    shown expired)."""
    try:
        return await _claim(services, attempt)
    except ToolChanged as exc:
        return exc
    except ApprovalExpired:
        return _TooLate()
    except AgentError as exc:
        if isinstance(exc, NotAllowedToDecide):
            rule = exc.rule if exc.rule == NOT_REQUESTER_RULE else Refusal.of(exc).rule
            await record_refusal(services, attempt, rule, thread_ts)
        elif answer_of(exc).kind in ("failed", "bad-request"):
            raise
        return told(exc)


async def _claim(services: Services, attempt: Attempt) -> AgentStream:
    return await services.agent.decide_request(attempt.request, attempt.decision)


async def _present_changed(
    services: Services,
    attempt: Attempt,
    changed: ToolChanged,
    card: PostedCard | None,
    thread: SlackThread,
) -> None:
    """The tool changed under the card: nothing ran. The user is told; when this decision
    presented the call again, the old card says it was replaced and the new card is posted
    (from the runtime's stream announcing it)."""
    await tell(services, attempt, msg.TOOL_CHANGED, thread.thread_ts)
    if not changed.presented_again or not isinstance(changed.stream, AgentStream):
        return  # an old card of a call already presented again: its new card is out
    if card is not None:
        await show_replaced(services, card, msg.REPLACED_TOOL_CHANGED)
    await post_run(services, changed.stream, thread)


def _where(attempt: Attempt) -> Clicked:
    return Clicked(
        team=attempt.team,
        channel=attempt.channel,
        message_ts=attempt.message_ts,
        thread_ts=attempt.thread_ts,
        is_question=attempt.question is not None,
    )
