"""``StreamedAnswer``: one answer streamed into an assistant thread with Slack's chat streaming.

The message goes through slack_sdk's ``AsyncChatStream`` (``SlackStream``, in
``bot.slack.delivery``): the first write starts it with the first text, later writes add what
the model produced since, at most once per ``interval`` seconds (text held back by the
throttle is sent by a timer, so a pause in the model never hides it), and the end stops it with
whatever is left. The pacing is ours: ``ChatStream`` buffers by size, not by time. Tool
progress goes into the same stream as ``TaskUpdateChunk``s, which Slack shows as task cards
between the text: pending → in_progress → complete or error.

Where Slack refuses streaming as not available (``StreamSupport``), the answer goes on as a
posted and updated message (``ReplyStreamer``), with nothing shown about it, and later answers
of this process are posted that way from the start (ours: ``ChatStream`` has no fallback).

A stream left open by a process that stopped (a restart while the answer was streaming) is
remembered in storage by its run (``slack:stream:<run_id>`` → ts) from its start to its stop:
the run's next delivery, after the restart, completes that message (stops it and writes the
whole answer into it with ``chat.update``) instead of streaming the answer a second time (ours:
a ``ChatStream`` cannot take over a stream another process started).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import Chunk, MarkdownTextChunk, TaskUpdateChunk

from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.blocks._blocks import answer_text
from bot.slack.delivery._streamer import ReplyStreamer, SlackStream, stop_left_open
from bot.slack.delivery._thread import SlackThread
from bot.slack.delivery.sending._kept_text import after_failed_append, complete_in_place
from storage import Storage

logger = logging.getLogger(__name__)

TaskStatus = Literal["pending", "in_progress", "complete", "error"]
"""The states of a task card."""
APPEND_INTERVAL_SECONDS = 0.5
"""At most one ``chat.appendStream`` per this many seconds."""
OPEN_STREAM_TTL_SECONDS = 86400
"""How long an open stream is remembered for the run's next delivery to complete."""
_Mode = Literal["stream", "update", "fallback"]


def open_stream_key(run_id: str) -> str:
    """Where the ts of the run's open stream is kept."""
    return f"slack:stream:{run_id}"


async def take_open_stream(storage: Storage, run_id: str) -> str | None:
    """The ts of the run's stream left open (and forget it), e.g. for the outbox to complete
    it once Slack answers again instead of posting the answer a second time."""
    ts = await storage.get_value(open_stream_key(run_id))
    if ts is not None:
        await storage.delete_value(open_stream_key(run_id))
    return ts


class StreamedAnswer:
    """Streams one run's answer (text and task cards) into an assistant thread."""

    def __init__(
        self,
        services: Services,
        thread: SlackThread,
        *,
        run_id: str,
        interval: float = APPEND_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._services = services
        self._thread = thread
        self._run_id = run_id
        self._interval = interval
        self._clock = clock
        self._sleep = sleep
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._timer_waiting = False
        self._fallback: ReplyStreamer | None = None
        self._reset()

    def _reset(self) -> None:
        self._pending: list[Chunk] = []
        self._text = ""
        self._ts: str | None = None
        self._stream: SlackStream | None = None
        self._mode: _Mode = "stream"
        self._sent_at = float("-inf")
        self._remembered = False

    @property
    def ts(self) -> str | None:
        """The ``ts`` of the answer's message once it exists."""
        return self._fallback.ts if self._fallback is not None else self._ts

    async def append(self, text: str) -> None:
        """Add answer text; streamed now when the throttle allows, else by a timer."""
        if self._fallback is not None:
            await self._fallback.append(text)
            return
        self._text += text
        last = self._pending[-1] if self._pending else None
        if isinstance(last, MarkdownTextChunk):
            last.text += text
        else:
            self._pending.append(MarkdownTextChunk(text=text))
        if self._text.strip():
            await self._schedule()

    async def task(
        self, task_id: str, title: str, status: TaskStatus, output: str | None = None
    ) -> None:
        """Show a tool's progress as a task card in the stream (only while streaming)."""
        if self._fallback is not None or self._mode != "stream":
            return
        update = TaskUpdateChunk(id=task_id, title=title, status=status, output=output or None)
        self._pending.append(update)
        await self._schedule()

    async def finish(self) -> str | None:
        """Send what is left and stop the stream; the next ``append`` starts a new message.
        Returns the ``ts`` of the message just completed (None: nothing was said)."""
        timer, self._timer = self._timer, None
        if timer is not None:
            if self._timer_waiting:
                timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)
        if self._fallback is not None:
            done = await self._fallback.finish()
            self._reset()
            return done
        async with self._lock:
            if self._ts is None and self._has_content():
                await self._open()
            if self._fallback is not None:
                return await self.finish()
            if self._ts is not None:
                await self._stop()
            done = self._ts
        self._reset()
        return done

    def _has_content(self) -> bool:
        return bool(self._text.strip()) or any(
            not isinstance(c, MarkdownTextChunk) for c in self._pending
        )

    async def _schedule(self) -> None:
        if self._timer is not None:
            return  # a write is scheduled already: it takes this along
        async with self._lock:
            wait = self._interval - (self._clock() - self._sent_at)
            if wait <= 0:
                await self._write()
                return
        self._timer_waiting = True
        self._timer = asyncio.get_running_loop().create_task(self._write_later(wait))

    async def _write_later(self, wait: float) -> None:
        """Write once the interval has passed, again while more arrived during a write."""
        while True:
            await self._sleep(wait)
            async with self._lock:
                self._timer_waiting = False
                await self._write()
                if not self._pending or self._fallback is not None:
                    self._timer = None
                    return
                self._timer_waiting = True
                wait = self._interval

    async def _write(self) -> None:
        if self._fallback is not None or not self._has_content():
            return
        if self._ts is None:
            await self._open()
        elif self._mode == "stream" and self._pending:
            await self._append_chunks()
        elif self._mode == "update":
            await self._update()
        self._sent_at = self._clock()

    async def _open(self) -> None:
        """Start the message: complete an interrupted one of this run, or start a stream (or
        fall back to posting when Slack does not stream here)."""
        services, thread = self._services, self._thread
        left_open = await self._left_open()
        if left_open is not None:
            await self._stop_quietly(left_open)
            self._ts, self._mode = left_open, "update"
            self._remembered = True
            await self._update()
            return
        if not services.streaming.enabled:
            await self._fall_back()
            return
        self._stream = await SlackStream.open(
            services.client,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            **_recipient(thread),
        )
        try:
            await self._stream.send(self._take())
        except SlackApiError as exc:
            if not services.streaming.refused(str(exc.response.get("error"))):
                raise
            await self._fall_back()
            return
        self._ts = self._stream.ts
        await self._remember()

    async def _append_chunks(self) -> None:
        assert self._stream is not None
        chunks = self._take()
        try:
            await self._stream.send(chunks)
        except SlackApiError as exc:
            await self._repair(exc, chunks)
        except Exception:  # not sent (storage could not vouch for the lease …): kept
            self._pending = chunks + self._pending
            raise

    async def _repair(self, exc: SlackApiError, chunks: list[Chunk]) -> None:
        """A failed append keeps its text (``sending._kept_text``): sent again after a 429,
        else the message is completed in place with everything said, then updated."""
        repair = after_failed_append(exc)
        if repair == "retry":
            self._pending = chunks + self._pending
            return
        if repair == "complete":
            logger.info("stream %s: an append failed (%s)", self._ts, exc.response.get("error"))
        assert self._ts is not None
        self._mode, self._pending = "update", []
        await complete_in_place(
            self._services.client, channel=self._thread.channel, ts=self._ts, said=self._text
        )

    async def _stop(self) -> None:
        assert self._ts is not None
        if self._mode == "stream" and self._stream is not None:
            try:
                await self._stream.stop(self._take())
            except SlackApiError as exc:  # the last text is kept: written in place
                self._mode = "update"
                logger.info("stream %s stopped in place (%s)", self._ts, exc.response.get("error"))
                await complete_in_place(
                    self._services.client,
                    channel=self._thread.channel,
                    ts=self._ts,
                    said=self._text,
                )
        elif self._mode == "update":
            await self._update()
        await self._forget()

    async def _update(self) -> None:
        assert self._ts is not None
        self._pending = []
        if self._text.strip():
            await self._services.client.chat_update(
                channel=self._thread.channel, ts=self._ts, text=answer_text(self._text)
            )

    async def _fall_back(self) -> None:
        """Post and update instead, starting with the text so far (tasks are left out)."""
        self._fallback = ReplyStreamer(
            self._services.client,
            channel=self._thread.channel,
            thread_ts=self._thread.thread_ts,
            min_interval=self._services.stream_interval,
        )
        self._pending = []
        if self._text:
            await self._fallback.append(self._text)

    def _take(self) -> list[Chunk]:
        chunks, self._pending = self._pending, []
        return chunks

    async def _stop_quietly(self, ts: str) -> None:
        try:
            await stop_left_open(self._services.client, channel=self._thread.channel, ts=ts)
        except SlackApiError as exc:
            logger.info(
                "the interrupted stream %s was stopped already: %s", ts, exc.response.get("error")
            )

    # -- the open stream of the run, kept in storage ------------------------------------------
    async def _left_open(self) -> str | None:
        try:
            return await self._services.storage.get_value(open_stream_key(self._run_id))
        except Exception as exc:
            if unavailable(exc) is None:
                raise
            return None

    async def _remember(self) -> None:
        assert self._ts is not None
        storage, key = self._services.storage, open_stream_key(self._run_id)
        try:
            await storage.delete_value(key)
            await storage.add_if_absent(key, self._ts, OPEN_STREAM_TTL_SECONDS)
            self._remembered = True
        except Exception as exc:
            if unavailable(exc) is None:
                raise
            logger.info("could not remember the open stream of run %s", self._run_id)

    async def _forget(self) -> None:
        if not self._remembered:
            return
        try:
            await self._services.storage.delete_value(open_stream_key(self._run_id))
        except Exception as exc:
            if unavailable(exc) is None:
                raise
            logger.info("could not forget the stream of run %s", self._run_id)


def _recipient(thread: SlackThread) -> dict[str, str]:
    """Who a stream in a channel is for (Slack requires it outside direct messages)."""
    if thread.channel.startswith("D") or not thread.requester:
        return {}
    return {"recipient_team_id": thread.team, "recipient_user_id": thread.requester}
