"""The status line of an assistant thread: what its run is doing now.

``RunStatus`` follows one delivery of a run's stream (``post_run`` feeds it every chunk) and
sets ``assistant.threads.setStatus`` when what the run does changes: "is thinking…" while the
model works, "is waiting for @sam to approve delete-record…" while a call waits (left standing
when the delivery ends there), "is running delete-record…" once it was decided and runs, and
cleared when the run answers. A wait is never claimed after its decision: the delivery of the
decided call's continuation starts from the decision (``tool-call-resumed``), so the status moves
on with it. In channels the card itself is the status: nothing is set there.

Other deliveries (grants, escalation) show a status through ``show_status`` /
``waiting_status`` so that every status line is worded here.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from agents import Chunk, PendingToolCall
from bot.slack._services import Services
from bot.slack.blocks._card import approver_mention
from bot.slack.delivery._card_posts import card_view
from bot.slack.delivery._thread import SlackThread
from bot.slack.surfaces._threads import is_assistant_thread
from bot.slack.surfaces._tools import tool_title

logger = logging.getLogger(__name__)


async def show_status(
    services: Services, thread: SlackThread, status: str, *, assistant: bool | None = None
) -> None:
    """Set the status line of ``thread`` when it is an assistant thread (``""`` clears it);
    nothing in a channel, where the card is the status. ``assistant``: the caller knows already
    (None: asked of storage). A refusal (a revoked scope …) is logged, never shown.

    The one entry point for deliveries outside a run's stream (a grant, an escalation widening
    who may approve: ``show_status(services, thread, waiting_status(...))``).
    """
    if assistant is None:
        assistant = await is_assistant_thread(services.storage, thread.thread_id)
    if not assistant:
        return
    try:
        await services.client.assistant_threads_setStatus(
            channel_id=thread.channel, thread_ts=thread.thread_ts, status=status
        )
    except SlackApiError as exc:
        logger.info(
            "could not set the status in %s: %s", thread.thread_id, exc.response.get("error")
        )


def waiting_status(
    services: Services, thread: SlackThread, run_id: str, call: PendingToolCall
) -> str:
    """ "is waiting for <who> to approve <tool>…" as the card of ``call`` names them (the
    policy's approvers, as the card says; anyone: "an approver")."""
    view = card_view(services, run_id, call, requester=thread.requester)
    tool = view.title or call.tool_name
    approvers = (*view.rules.approvers, *view.rules.escalated_approvers)  # escalation's too
    if not approvers:
        return msg.STATUS_WAITING_ANYONE.format(tool=tool)
    return msg.STATUS_WAITING.format(
        who=", ".join(approver_mention(a) for a in approvers[:5]), tool=tool
    )


class RunStatus:
    """The status of one run's delivery in ``thread``; does nothing outside assistant threads."""

    def __init__(self, services: Services, thread: SlackThread, *, assistant: bool) -> None:
        self._services = services
        self._thread = thread
        self._on = assistant
        self._shown: str | None = None

    @property
    def shown(self) -> str | None:
        """The status last set by this delivery (None: none yet)."""
        return self._shown

    async def show(self, status: str) -> None:
        """Set ``status`` unless it is shown already."""
        if not self._on or status == self._shown:
            return
        self._shown = status
        await show_status(self._services, self._thread, status, assistant=True)

    async def follow(self, chunk: Chunk) -> None:
        """Move the status on with ``chunk`` of the run's stream.

        A gated call is "running" only from its approval on (``tool-call-resumed`` of an
        approved call): the ``tool-call`` announcing a step's calls comes before anyone knows
        which of them wait, so it changes nothing ("is thinking…" stays).
        """
        if not self._on:
            return  # a channel: the card is the status (and nothing is read for it)
        services, thread = self._services, self._thread
        if chunk.type in ("start", "tool-result", "tool-output-denied"):
            await self.show(msg.STATUS_THINKING)
        elif chunk.type == "tool-call-approval":
            await self.show(waiting_status(services, thread, chunk.run_id, chunk.pending_call()))
        elif chunk.type == "tool-call-granted":  # a standing grant approved it: it runs now
            await self.show(msg.STATUS_RUNNING.format(tool=tool_title(services, chunk.tool_name)))
        elif chunk.type == "tool-call-suspended":
            tool = tool_title(services, chunk.tool_name, chunk.agent_path)
            await self.show(msg.STATUS_ASKING.format(tool=tool))
        elif chunk.type == "tool-call-resumed":
            if chunk.kind == "suspension" or await was_approved(
                services, chunk.run_id, chunk.tool_call_id
            ):
                await self.show(
                    msg.STATUS_RUNNING.format(tool=tool_title(services, chunk.tool_name))
                )
            else:
                await self.show(msg.STATUS_THINKING)

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
