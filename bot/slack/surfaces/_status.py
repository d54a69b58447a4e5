"""The status line of an assistant thread: what its run is doing now.

``RunStatus`` follows one delivery of a run's stream (``post_run`` feeds it every chunk) and
sets ``assistant.threads.setStatus`` when what the run does changes: "is thinking…" while the
model works, "is waiting for @sam to approve delete-record…" (names, not mentions: the status
is plain text) while a call waits (left standing
when the delivery ends there), "is running delete-record…" once it was decided and runs, and
cleared when the run answers. A wait is never claimed after its decision: the delivery of the
decided call's continuation starts from the decision (``tool-call-resumed``), so the status moves
on with it. In channels the card itself is the status: nothing is set there.

Other deliveries (grants, escalation) show a status through ``show_status`` /
``show_waiting`` so that every status line is worded here.

A status that says the run waits for a person is kept standing (``StatusKeeper``): Slack clears
a status after about two minutes, so ``refresh_statuses`` sets it again while a call it names is
still pending.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import Chunk, PendingToolCall
from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.delivery._card_posts import card_view
from bot.slack.delivery._thread import SlackThread
from bot.slack.surfaces._status_keeper import KeptStatus
from bot.slack.surfaces._threads import is_assistant_thread
from bot.slack.surfaces._tools import tool_title

logger = logging.getLogger(__name__)


async def show_status(
    services: Services, thread: SlackThread, status: str, *, assistant: bool | None = None
) -> None:
    """Set the status line of ``thread`` when it is an assistant thread (``""`` clears it);
    nothing in a channel, where the card is the status. ``assistant``: the caller knows already
    (None: asked of storage). A refusal (a revoked scope …) is logged, never shown.

    The one entry point for deliveries outside a run's stream (a grant: "is running …"); a
    wait for a person is shown with ``show_waiting``, which keeps it standing.
    """
    if assistant is None:
        assistant = await is_assistant_thread(services.storage, thread.thread_id)
    if not assistant:
        return
    services.statuses.forget(thread.thread_id)  # a waiting status is kept by ``show_waiting``
    await _set(services, thread, status)


async def show_waiting(
    services: Services, thread: SlackThread, run_id: str, calls: list[PendingToolCall]
) -> None:
    """Show that ``calls`` of ``run_id`` wait for a person (the last one named), and keep that
    status standing while any of them is pending (an assistant thread only)."""
    if not calls or not await is_assistant_thread(services.storage, thread.thread_id):
        return
    status = await _waiting_for(services, thread, run_id, calls[-1])
    await _set(services, thread, status)
    ids = frozenset(c.tool_call_id for c in calls)
    services.statuses.keep(thread, status, run_id=run_id, calls=ids)


async def refresh_statuses(services: Services, *, now: float | None = None) -> int:
    """Set again every kept waiting status Slack would clear soon, while a call it waits for is
    still pending (else forget it); returns how many were set. One pass."""
    refreshed = 0
    for kept in services.statuses.due(now):
        try:
            waiting = await _still_waiting(services, kept)
        except Exception as exc:
            if unavailable(exc) is None:
                raise
            logger.info("could not read whether %s still waits: %s", kept.run_id, exc)
            continue  # storage is down: the next pass looks again
        if services.statuses.kept(kept.thread.thread_id) != kept:
            continue  # the thread moved on meanwhile
        if not waiting:
            services.statuses.forget(kept.thread.thread_id)
            continue
        await _set(services, kept.thread, kept.status)
        services.statuses.shown(kept, now)
        refreshed += 1
    return refreshed


async def _still_waiting(services: Services, kept: KeptStatus) -> bool:
    for tool_call_id in sorted(kept.calls):
        call = await services.agent.pending_call(run_id=kept.run_id, tool_call_id=tool_call_id)
        if call is not None:
            return True
    return False


async def _set(services: Services, thread: SlackThread, status: str) -> None:
    try:
        await services.client.assistant_threads_setStatus(
            channel_id=thread.channel, thread_ts=thread.thread_ts, status=status
        )
    except SlackApiError as exc:
        logger.info(
            "could not set the status in %s: %s", thread.thread_id, exc.response.get("error")
        )


async def _waiting_for(
    services: Services, thread: SlackThread, run_id: str, call: PendingToolCall
) -> str:
    """ "is waiting for @sam, @approvers to approve <tool>…" as the card of ``call`` names them
    (the policy's approvers, as the card says; anyone: "an approver"). The status line is plain
    text, where Slack shows no mention as a name: the names are looked up (cached)."""
    view = card_view(services, run_id, call, requester=thread.requester)
    tool = view.title or call.tool_name
    approvers = (*view.rules.approvers, *view.rules.escalated_approvers)  # escalation's too
    named = await services.names.mentions(services.client, approvers[:5])
    if not named:
        return msg.STATUS_WAITING_ANYONE.format(tool=tool)
    return msg.STATUS_WAITING.format(who=", ".join(named), tool=tool)


class RunStatus:
    """The status of one run's delivery in ``thread``; does nothing outside assistant threads."""

    def __init__(self, services: Services, thread: SlackThread, *, assistant: bool) -> None:
        self._services = services
        self._thread = thread
        self._on = assistant
        self._shown: str | None = None
        self._waiting: list[PendingToolCall] = []

    @property
    def shown(self) -> str | None:
        """The status last set by this delivery (None: none yet)."""
        return self._shown

    async def show(self, status: str) -> None:
        """Set ``status`` unless it is shown already."""
        self._waiting = []
        if not self._on or status == self._shown:
            return
        self._shown = status
        await show_status(self._services, self._thread, status, assistant=True)

    async def wait_for(self, run_id: str, call: PendingToolCall) -> None:
        """``call`` waits for a person: say so, and keep saying it while it waits (with the
        other calls of the step that wait too)."""
        waiting = [*self._waiting, call]
        status = await _waiting_for(self._services, self._thread, run_id, call)
        if self._on and status != self._shown:
            self._shown = status
            await _set(self._services, self._thread, status)
        if self._on:
            ids = frozenset(c.tool_call_id for c in waiting)
            self._services.statuses.keep(self._thread, status, run_id=run_id, calls=ids)
        self._waiting = waiting

    async def follow(self, chunk: Chunk) -> None:
        """Move the status on with ``chunk`` of the run's stream.

        A gated call is "running" only from its approval on (``tool-call-resumed`` of an
        approved call): the ``tool-call`` announcing a step's calls comes before anyone knows
        which of them wait, so it changes nothing ("is thinking…" stays).
        """
        if not self._on:
            return  # a channel: the card is the status (and nothing is read for it)
        services = self._services
        if chunk.type in ("start", "tool-result", "tool-output-denied"):
            await self.show(msg.STATUS_THINKING)
        elif chunk.type == "tool-call-approval":
            await self.wait_for(chunk.run_id, chunk.pending_call())
        elif chunk.type == "tool-call-granted":  # a standing grant approved it: it runs now
            await self.show(msg.STATUS_RUNNING.format(tool=tool_title(services, chunk.tool_name)))
        elif chunk.type == "tool-call-suspended":
            tool = tool_title(services, chunk.tool_name, chunk.agent_path)
            await self.show(msg.STATUS_ASKING.format(tool=tool))
            self._keep_asking(chunk.run_id, chunk.tool_call_id)
        elif chunk.type == "tool-call-resumed":
            if chunk.kind == "suspension" or await was_approved(
                services, chunk.run_id, chunk.tool_call_id
            ):
                await self.show(
                    msg.STATUS_RUNNING.format(tool=tool_title(services, chunk.tool_name))
                )
            else:
                await self.show(msg.STATUS_THINKING)

    def _keep_asking(self, run_id: str, tool_call_id: str) -> None:
        """A question waits for a person's answer: its status is kept standing too."""
        if self._on and self._shown is not None:
            ids = frozenset({tool_call_id})
            self._services.statuses.keep(self._thread, self._shown, run_id=run_id, calls=ids)

    async def answered(self) -> None:
        """The run answered (or failed): clear the status line."""
        if self._shown not in (None, msg.STATUS_CLEARED):
            await self.show(msg.STATUS_CLEARED)


async def was_approved(services: Services, run_id: str, tool_call_id: str) -> bool:
    """Whether the latest decision of the call approved it (its claim says so)."""
    claims = [
        c for c in await services.storage.list_claims(run_id) if c.tool_call_id == tool_call_id
    ]
    return bool(claims) and max(claims, key=lambda c: c.decided_at).decision == "approved"
