"""Escalation of calls nobody decides (SPEC 15), a part of the sweep.

At each of its rule's ``escalate`` steps (``after`` measured from when the call was presented)
a pending call goes through the step once, across every instance: ``Agent.escalate_tool_call``
records it in storage (a compare-and-set on the step number: of several instances sweeping at
once, one wins each step) and in the audit, and adds the step's ``approvers`` to that call (the
decision policy lets them approve it, inside the claim). Only the instance that won the step
posts one message in the call's thread mentioning the step's ``notify``, and updates the card to
say who else may now approve (a runner job under the thread's lock, so a click deciding the call
meanwhile keeps the last word on its card). The model is not called; the TTL still expires the call.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from agents import Escalation, PendingToolCall, SuspendedRun
from bot.policy._values import show_duration
from bot.slack._ids import thread_id
from bot.slack._services import Services
from bot.slack.blocks._blocks import as_dicts
from bot.slack.blocks._card import approval_card, approval_fallback, approver_mention, tool_label
from bot.slack.blocks._mrkdwn import escape_truncated
from bot.slack.blocks.standing._escalation import escalation_text
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._card_source import described
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery._webclient import redraw
from bot.slack.delivery.batch._cards import redraw_batch
from bot.slack.surfaces._status import show_waiting

logger = logging.getLogger(__name__)


async def escalate_due(
    services: Services,
    run: SuspendedRun,
    call: PendingToolCall,
    *,
    since: datetime,
    now: datetime,
) -> tuple[int, datetime | None]:
    """Take every step of ``call``'s rule due at ``now`` that it has not been through yet (in
    order, each once); how many this instance took, and when the next step is due (None: no
    step left)."""
    steps = call.requirement.escalate  # what the gate stored with the call
    taken = 0
    for number in range(call.escalation_step + 1, len(steps) + 1):
        step = steps[number - 1]
        due = since + timedelta(seconds=step.after_seconds)
        if now < due:
            return taken, due
        escalated = await services.agent.escalate_tool_call(
            run_id=run.run_id,
            tool_call_id=call.tool_call_id,
            step=number,
            approvers=step.approvers,
            notify=step.notify,
            at=now,
        )
        if escalated is None:
            continue  # another instance took this step (or the call was decided meanwhile)
        taken += 1
        await _tell(services, run.run_id, escalated, step)
    return taken, None


async def _tell(services: Services, run_id: str, call: PendingToolCall, step: Escalation) -> None:
    """The step's message in the call's thread; its card's update is handed to the runner."""
    card = await services.cards.find(run_id, call.tool_call_id)
    if card is None:
        return  # no card (a call decided through the API only): the approvers still apply
    view = described(services, card.view, call)
    tool = escape_truncated(tool_label(view), 80).replace("`", "'")
    added = view.rules.escalated_approvers  # none when anyone may approve anyway
    text = escalation_text(
        notify=step.notify,
        approvers=[a for a in step.approvers if a in added],
        tool=tool,
        waited=show_duration(timedelta(seconds=step.after_seconds)),
        mention=approver_mention,
    )
    await services.client.chat_postMessage(
        channel=card.channel, thread_ts=card.thread_ts, text=text
    )
    services.runner.submit(_show(services, run_id, card), name=f"escalated-{run_id}")


async def _show(services: Services, run_id: str, card: PostedCard) -> None:
    """Whatever card shows the call (its own, or a batch card), drawn again from storage as
    the call now stands (who else may approve), under the thread's lock, which a click claims
    under: a call decided meanwhile keeps the card its decision gave it."""
    thread = thread_id(card.team, card.channel, card.thread_ts)
    async with services.locks.hold(thread):
        call = await services.agent.pending_call(
            run_id=run_id, tool_call_id=card.view.ref.tool_call_id
        )
        if call is None:
            return
        if card.batch:  # the other calls of the message keep their rows and buttons
            await redraw_batch(services, card)
            await _show_status(services, card, run_id, call)
            return
        view = described(services, card.view, call)
        await redraw(
            services.client,
            channel=card.channel,
            ts=card.ts,
            text=approval_fallback(view),
            blocks=as_dicts(approval_card(view)),
        )
        await _show_status(services, card, run_id, call)


async def _show_status(
    services: Services, card: PostedCard, run_id: str, call: PendingToolCall
) -> None:
    """An assistant thread's status names who may now approve too."""
    where = SlackThread(
        team=card.team,
        channel=card.channel,
        thread_ts=card.thread_ts,
        requester=card.view.requester,
    )
    await show_waiting(services, where, run_id, [call])
