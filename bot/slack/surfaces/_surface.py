"""``RunSurface``: how one delivery of a run shows up in its thread besides cards.

In an assistant thread: the status line (``RunStatus``) and the answer streamed with task cards
(``StreamedAnswer``). Elsewhere (channel threads, DMs outside the assistant view): the answer
posted and updated (``ReplyStreamer``) and no status, the card being the status. Channel threads
are not streamed: Slack's chat streaming addresses a channel stream to one recipient user, and
the card and the answer are for everyone in the channel.

A call's task card in the message that asked for it ends there: "sent for approval" (or "asked
for details"), complete, since the card (or question) takes over; the decided call's progress
is a new task card in the answer that follows the decision.

``post_run`` hands every chunk of the run to ``follow`` after showing it, so statuses and task
cards change in this one place whatever delivered the run (a message, a click, a decision taken
through the API, recovery, expiry).
"""

from __future__ import annotations

from typing import Any

import bot.slack._messages as msg
from agents import Chunk
from bot.slack._services import Services
from bot.slack.delivery._streamer import ReplyStreamer
from bot.slack.delivery._thread import SlackThread
from bot.slack.surfaces._status import RunStatus, was_approved
from bot.slack.surfaces._stream_answer import StreamedAnswer, TaskStatus
from bot.slack.surfaces._threads import is_assistant_thread
from bot.slack.surfaces._tools import tool_title


class RunSurface:
    """The status line and answer writer of one delivery of ``run_id`` in ``thread``."""

    def __init__(self, services: Services, thread: SlackThread, run_id: str, *, assistant: bool):
        self._services = services
        self.status = RunStatus(services, thread, assistant=assistant)
        """The thread's status line (inert outside assistant threads)."""
        self.writer: StreamedAnswer | ReplyStreamer
        """Where the answer's text goes."""
        if assistant:
            self.writer = StreamedAnswer(
                services, thread, run_id=run_id, interval=services.append_interval
            )
        else:
            self.writer = ReplyStreamer(
                services.client,
                channel=thread.channel,
                thread_ts=thread.thread_ts,
                min_interval=services.stream_interval,
            )

    @classmethod
    async def open(cls, services: Services, thread: SlackThread, run_id: str) -> RunSurface:
        """The surface of ``thread`` as it is (an assistant thread or not)."""
        return cls(
            services,
            thread,
            run_id,
            assistant=await is_assistant_thread(services.storage, thread.thread_id),
        )

    async def follow(self, chunk: Chunk) -> None:
        """Show what ``chunk`` changes: the status line and the tool's task card."""
        if chunk.type == "tool-call":
            await self._task(chunk.tool_call_id, chunk.tool_name, "pending")
        elif chunk.type == "tool-call-approval":  # this message's part is done: the card asks
            await self._task(
                chunk.tool_call_id, chunk.tool_name, "complete", template=msg.TASK_SENT_FOR_APPROVAL
            )
        elif chunk.type == "tool-call-suspended":
            await self._task(
                chunk.tool_call_id, chunk.tool_name, "complete", template=msg.TASK_ASKED
            )
        elif chunk.type == "tool-call-granted":
            await self._task(chunk.tool_call_id, chunk.tool_name, "in_progress")
        elif chunk.type == "tool-call-resumed" and chunk.kind == "approval":
            if isinstance(self.writer, StreamedAnswer) and await was_approved(
                self._services, chunk.run_id, chunk.tool_call_id
            ):  # a declined call never runs: its card goes to "error" with the decline
                await self._task(chunk.tool_call_id, chunk.tool_name, "in_progress")
        elif chunk.type == "tool-result":
            failed = _failed(chunk.result)
            await self._task(
                chunk.tool_call_id, chunk.tool_name, "error" if failed else "complete", failed
            )
        elif chunk.type == "tool-output-denied":
            await self._task(
                chunk.tool_call_id, chunk.tool_name, "error", chunk.reason or "declined"
            )
        await self.status.follow(chunk)

    async def _task(
        self,
        task_id: str,
        tool_name: str,
        status: TaskStatus,
        output: str | None = None,
        *,
        template: str = "{tool}",
    ) -> None:
        if isinstance(self.writer, StreamedAnswer):
            title = template.format(tool=tool_title(self._services, tool_name))
            await self.writer.task(task_id, title, status, output)


def _failed(result: Any) -> str | None:
    """The error of a tool result that is one (``{"error": …}``, an interrupted call)."""
    if isinstance(result, dict):
        if set(result) == {"error"}:
            return str(result["error"])
        if result.get("status") == "interrupted":
            return str(result.get("message") or "interrupted")
    return None
