"""A decided call shown in Slack: its card (or question) updated in place, then the run's
continuation posted in its thread, holding the thread's lock; a failure is told in the thread.

Every edge that decides goes through ``show_decided``: a button click or a modal (``_decisions``),
a decision taken through the HTTP API and a run recovered at start-up (``_publish``), the
expiry sweep (``_expiry``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import AgentStream, Decision, PendingToolCall, Resume, ToolCallApprovalChunk
from bot.ops._outage import unavailable, waiting_out
from bot.slack._services import Services
from bot.slack.blocks._blocks import (
    CardView,
    Decided,
    answer_text,
    answered_question,
    approval_card,
    approval_fallback,
    as_dicts,
    decided_card,
    decided_fallback,
    question_fallback,
    replaced_card,
    slack_date,
)
from bot.slack.blocks._mrkdwn import mention
from bot.slack.blocks._reminders import reminder_done
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_posts import rewrite_reminder
from bot.slack.delivery._card_source import described
from bot.slack.delivery._claimed import (
    claimed_detail,
    stored_outcome,
    taken_over,
    takeover_status,
)
from bot.slack.delivery._outbox import enqueue, new_write
from bot.slack.delivery._render import post_run, reporting_failures
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery._webclient import redraw
from bot.slack.delivery.batch._cards import redraw_batch
from bot.slack.delivery.sending._fence import fenced
from bot.slack.surfaces._stream_answer import take_open_stream
from storage import utcnow

logger = logging.getLogger(__name__)

T = TypeVar("T")


async def show_decided(
    services: Services,
    decision: Decision | None,
    *,
    run_id: str,
    tool_call_id: str,
    by: str | None,
    at: datetime,
    stream: AgentStream,
    card: PostedCard | None = None,
    lock_held: bool = False,
    interrupted: bool = False,
) -> None:
    """Show ``decision`` (taken by ``by`` at ``at``) on its card and post ``stream`` in the thread.

    ``card`` is looked up when the caller does not have it; a call never shown in Slack is left
    alone (its run goes on by itself). An approval card shows who decided, how and when, without
    buttons; a question answered by ``Resume`` loses its "Provide details" button and says who
    answered; ``decision`` None (a run recovered after a crash, or taken over) shows the outcome
    storage has for the call: who approved it, and that it was run again or interrupted
    (``interrupted``: its outcome is unknown, said even before storage has it).
    ``lock_held``: the caller already holds the thread's lock (a click claims under it).
    Every write is fenced by the run's leases (``fenced``): once another instance took the
    call over, this one shows nothing more (the new owner shows its one outcome), but for
    putting back the takeover's own card its late "approved" may have covered.
    """
    unfenced, services = services, fenced(services, stream)
    if card is None:
        card = await _patiently(services, lambda: services.cards.find(run_id, tool_call_id))
    if card is None:
        return
    thread = SlackThread(
        team=card.team,
        channel=card.channel,
        thread_ts=card.thread_ts,
        requester=card.view.requester,
    )
    lock = contextlib.nullcontext() if lock_held else _thread_lock(services, thread.thread_id)
    async with lock, reporting_failures(services, thread):
        again = await _presented_again(stream, card) if decision is not None else None
        if again is not None:
            line = msg.REPLACED_BY_EDIT.format(who=mention(by), when=slack_date(at))
            if again.fingerprint == card.view.ref.fingerprint:  # same arguments: a new tool
                line = msg.REPLACED_TOOL_CHANGED
            await show_replaced(services, card, line)
            await _post_or_keep(services, stream, thread)  # the new card
            return
        if decision is not None:
            waiting = await _still_waiting(stream, card) if decision.kind == "approve" else None
            if waiting is not None:
                await show_waiting(services, card, waiting)
                return
            shown = card

            async def show_outcome() -> None:
                approvers = await _quorum(services, shown) if decision.kind == "approve" else ()
                stored = await stored_outcome(services.storage, run_id, tool_call_id)
                decided = Decided(
                    decision=decision,
                    by=by,
                    at=at,
                    approvers=approvers,
                    interrupted=stored is not None and stored.interrupted,
                    ran_again=stored is not None and stored.ran_again,
                )
                if decision.kind != "approve" or not await taken_over(
                    services.storage, run_id, tool_call_id
                ):  # a takeover's outcome ("interrupted") is final: a late "approved" keeps off
                    await _update(services, shown, decided)
                    if decision.kind == "approve":  # before any other write the fence may stop
                        await _keep_takeover_shown(unfenced, shown, run_id, tool_call_id)
                    await _update_reminder(services, shown, decided)

            await _patiently(services, show_outcome)  # the card must reach its outcome
        else:  # recovered after a crash or taken over: the card as storage has the outcome
            await show_stored(services, card, at=at, interrupted=interrupted)
        await _post_or_keep(services, stream, thread)


async def show_stored(
    services: Services, card: PostedCard, *, at: datetime, interrupted: bool = False
) -> None:
    """The card (and its reminder) as storage has the call's outcome now (``interrupted``: said
    even before storage has it); through a storage outage."""
    ref = card.view.ref

    async def attempt() -> None:
        stored = await stored_outcome(services.storage, ref.run_id, ref.tool_call_id)
        if stored is None and interrupted:
            stored = Decided(decision=None, by=None, at=at, interrupted=True)
        if stored is not None:
            await _update(services, card, stored)
            await _update_reminder(services, card, stored)

    await _patiently(services, attempt)


async def show_many_decided(
    services: Services,
    decisions: Mapping[str, Decision],
    *,
    run_id: str,
    by: str | None,
    at: datetime,
    stream: AgentStream,
) -> None:
    """Show calls decided together (``decide_many``): each batch card they are on drawn again
    once, a card of its own updated, then the run posted once in its thread."""
    services = fenced(services, stream)
    cards = [await services.cards.find(run_id, tool_call_id) for tool_call_id in decisions]
    known = [card for card in cards if card is not None]
    if not known:
        return
    first = known[0]
    thread = SlackThread(
        team=first.team,
        channel=first.channel,
        thread_ts=first.thread_ts,
        requester=first.view.requester,
    )
    async with _thread_lock(services, thread.thread_id), reporting_failures(services, thread):
        redrawn: set[str] = set()
        for card in known:
            if card.batch:
                if card.ts not in redrawn:
                    redrawn.add(card.ts)
                    await redraw_batch(services, card)
                continue
            decided = Decided(decision=decisions[card.view.ref.tool_call_id], by=by, at=at)
            await _update(services, card, decided)
            await _update_reminder(services, card, decided)
        await _post_or_keep(services, stream, thread)


LOCK_WAIT_SECONDS = 600.0
"""How long showing a decided call waits through an outage of Redis (the thread lock) or
storage (the card index, the claim)."""


@contextlib.asynccontextmanager
async def _thread_lock(services: Services, thread_id: str) -> AsyncIterator[None]:
    """The thread's lock, waited for through an outage of what keeps it (Redis): the decided
    call's outcome is shown once Redis answers again, never dropped with a traceback."""
    async with contextlib.AsyncExitStack() as stack:
        await waiting_out(
            services.outages,
            lambda: stack.enter_async_context(services.locks.hold(thread_id)),
            services=("redis", "storage"),
            seconds=LOCK_WAIT_SECONDS,
        )
        yield


async def _patiently(services: Services, attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()`` (safe to repeat) through a storage outage: a decided call's card and its
    answer are owed to the thread, never dropped for "my database could not be reached"."""
    return await waiting_out(
        services.outages, attempt, services=("storage",), seconds=LOCK_WAIT_SECONDS
    )


async def _keep_takeover_shown(
    services: Services, card: PostedCard, run_id: str, tool_call_id: str
) -> None:
    """Paused between the check and the update, this process may have just overwritten a
    takeover's "interrupted" card with "approved": show the takeover's outcome again (the same
    card the new owner shows; nothing new is said). ``services`` unfenced: the fence refuses
    every write of a process whose run was taken over, this one included, and the late
    "approved" it covers has already passed the fence."""
    if await takeover_status(services.storage, run_id, tool_call_id) == "interrupted":
        stored = await stored_outcome(services.storage, run_id, tool_call_id)
        await _update(services, card, stored or Decided(decision=None, by=None, at=utcnow()))


async def _post_or_keep(services: Services, stream: AgentStream, thread: SlackThread) -> None:
    """Post the run in its thread; with Slack unreachable, keep its answer in the outbox (as
    an update of the answer's stream when one was started: the answer is written once)."""
    try:
        await post_run(services, stream, thread, owed=True)
    except Exception as exc:
        if unavailable(exc) != "slack":
            raise
        services.outages.down("slack", exc)
        result = await stream.result()  # the run goes on without Slack
        text = answer_text(result.text)
        streamed = await take_open_stream(services.storage, stream.run_id)
        if streamed is not None:
            write = new_write(method="chat.update", channel=thread.channel, ts=streamed, text=text)
        else:
            write = new_write(
                method="chat.postMessage",
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                text=text,
            )
        await enqueue(services, write)


async def _presented_again(stream: AgentStream, card: PostedCard) -> ToolCallApprovalChunk | None:
    """The new proposal when the decision presented the call again (an edit that needs more
    approval, a tool that changed): its stream announces the same call again before anything
    runs. None otherwise."""
    async for chunk in stream.full_stream:
        if chunk.type == "start":
            continue
        if isinstance(chunk, ToolCallApprovalChunk):
            return chunk if chunk.tool_call_id == card.view.ref.tool_call_id else None
        return None
    return None


async def show_replaced(services: Services, card: PostedCard, line: str) -> None:
    """The card of a call presented again on a new card: "Replaced", why (``line``), no
    buttons."""
    if card.batch:  # one row of a batch card: the message is drawn again, that row replaced
        await redraw_batch(services, card)
        return
    if not card.ts:
        return
    await redraw(
        services.client,
        channel=card.channel,
        ts=card.ts,
        text=approval_fallback(card.view),
        blocks=as_dicts(replaced_card(card.view, line)),
    )


async def _still_waiting(stream: AgentStream, card: PostedCard) -> PendingToolCall | None:
    """For an approval short of its quorum: the call, with who has approved so far.

    The runtime answers such an approval with a stream that ends ``suspended`` at once; a
    deciding approval's stream goes on with the call (``tool-call-resumed``) first.
    """
    if card.view.rules.approvals_required <= 1:
        return None
    async for chunk in stream.full_stream:
        if chunk.type == "start":
            continue
        if chunk.type != "finish":
            return None
        break
    result = await stream.result()
    ref = card.view.ref
    return next((p for p in result.pending if p.tool_call_id == ref.tool_call_id), None)


async def show_waiting(services: Services, card: PostedCard, call: PendingToolCall) -> None:
    """The card still waiting, with the quorum progress ("1 of 2 approvals: <@U1>": who still
    counts) and who may approve under the policy in force."""
    if card.batch:
        await redraw_batch(services, card)
        return
    view = replace(described(services, card.view, call), approved_by=tuple(call.approved_by))
    await redraw(
        services.client,
        channel=card.channel,
        ts=card.ts,
        text=approval_fallback(view),
        blocks=as_dicts(approval_card(view)),
    )


async def _quorum(services: Services, card: PostedCard) -> tuple[str, ...]:
    """Every approver of an approved quorum call, in order (as its claim recorded them);
    empty for a call one approval decides."""
    if card.view.rules.approvals_required <= 1:
        return ()
    ref = card.view.ref
    approvers = await claimed_detail(
        services.storage, ref.run_id, ref.tool_call_id, "approved", "approved_by"
    )
    return tuple(str(a) for a in approvers) if isinstance(approvers, list) else ()


async def _update_reminder(services: Services, card: PostedCard, decided: Decided) -> None:
    """A reminder posted for this card says it was decided (no longer "still waiting")."""
    if decided.decision is None or decided.decision.kind == "resume":
        return
    await rewrite_reminder(services, card, reminder_done(card.view, decided))


def may_ask_again(services: Services, view: CardView) -> bool:
    """Whether an expired call can be asked again from its card: a call the served main agent
    made itself, for a person (a sub-agent's call is asked by its supervisor's run, a gateway
    call by its client)."""
    path = view.agent_path
    return bool(view.requester) and len(path) == 1 and path[0] == services.agent.id


async def _update(services: Services, card: PostedCard, decided: Decided) -> None:
    """Replace the card (or question) by its decided form; a failure leaves it stale (logged).
    A call on a batch card has the whole message drawn again, from storage."""
    if card.batch:
        await redraw_batch(services, card)
        return
    if not card.ts:
        return
    decision = decided.decision
    if isinstance(decision, Resume):
        if card.question is None:
            return
        tool, question = card.view.tool_name, card.question
        text = question_fallback(tool, question)
        answer = decision.data
        blocks = answered_question(tool, question, decided.by or "someone", decided.at, answer)
    else:
        text = decided_fallback(card.view, decided)
        blocks = decided_card(card.view, decided, ask_again=may_ask_again(services, card.view))
    try:
        await services.client.chat_update(
            channel=card.channel, ts=card.ts, text=text, blocks=as_dicts(blocks)
        )
    except Exception as exc:
        if unavailable(exc) == "slack":  # kept, made once Slack answers again
            services.outages.down("slack", exc)
            write = new_write(
                method="chat.update",
                channel=card.channel,
                ts=card.ts,
                text=text,
                blocks=as_dicts(blocks),
            )
            await enqueue(services, write)
        elif isinstance(exc, SlackApiError):
            logger.warning("could not update card %s: %s", card.ts, exc.response.get("error"))
        else:
            raise
