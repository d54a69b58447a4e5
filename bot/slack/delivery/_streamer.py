"""``ReplyStreamer``: one Slack message that grows as the agent's text arrives.

The first text is posted at once; later text updates the same message at most once per
``min_interval`` seconds (Slack allows about one write per second per channel). Text held back
by the throttle is written by a timer when the interval has passed, so a pause in the stream
(a tool running) never hides it; ``finish()`` writes whatever is still unsent. Ours, not
slack_sdk's: its ``ChatStream`` only streams, and this is the answer where Slack does not.

``SlackStream``: a message streamed with Slack's chat streaming, through slack_sdk's
``AsyncChatStream``; ``stop_left_open`` stops a stream a process that died left open.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from slack_sdk.models.messages.chunk import Chunk
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks._blocks import answer_text


class ReplyStreamer:
    """Streams text into one thread reply."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._min_interval = min_interval
        self._clock = clock
        self._sleep = sleep
        self._text = ""
        self._sent = ""
        self._ts: str | None = None
        self._sent_at = 0.0
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None
        self._timer_waiting = False

    @property
    def ts(self) -> str | None:
        """The ``ts`` of the reply once posted."""
        return self._ts

    async def append(self, text: str) -> None:
        """Add text; writes to Slack now when the throttle allows, else schedules a write."""
        self._text += text
        if not self._text.strip():
            return
        wait = self._min_interval - (self._clock() - self._sent_at)
        if wait <= 0:
            await self._write()
        elif self._timer is None:
            self._timer_waiting = True
            self._timer = asyncio.get_running_loop().create_task(self._write_later(wait))

    async def finish(self) -> str | None:
        """Write the text not sent yet; the next ``append`` starts a new message. Returns the
        ``ts`` of the message just completed (None: there was no text to post)."""
        timer, self._timer = self._timer, None
        if timer is not None:
            if self._timer_waiting:
                timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)
        await self._write()
        done = self._ts
        self._text, self._sent, self._ts = "", "", None
        return done

    async def _write_later(self, wait: float) -> None:
        await self._sleep(wait)
        self._timer_waiting = False
        await self._write()
        self._timer = None

    async def _write(self) -> None:
        async with self._lock:
            if not self._text.strip() or self._text == self._sent:
                return
            text, pending = answer_text(self._text), self._text
            if self._ts is None:
                response = await self._client.chat_postMessage(
                    channel=self._channel, thread_ts=self._thread_ts, text=text
                )
                self._ts = str(response["ts"])
            else:
                await self._client.chat_update(channel=self._channel, ts=self._ts, text=text)
            self._sent = pending
            self._sent_at = self._clock()


class SlackStream:
    """One message streamed with Slack's chat streaming, through slack_sdk's ``AsyncChatStream``
    (``client.chat_stream()``): the first ``send`` starts it (``chat.startStream``), the next
    ones append (``chat.appendStream``), ``stop`` ends it (``chat.stopStream``).

    The small interface the bot's streamed answers use (``bot.slack.surfaces``): what to send
    when is theirs (the 0.5 s pacing: ``ChatStream`` buffers by size, not by time), how it
    reaches Slack is here. Errors are Slack's (``SlackApiError``), raised as they come.
    """

    def __init__(self, stream: AsyncChatStream) -> None:
        self._stream = stream

    @classmethod
    async def open(
        cls,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        recipient_team_id: str | None = None,
        recipient_user_id: str | None = None,
    ) -> SlackStream:
        """A stream into ``thread_ts`` (nothing is sent yet). Outside direct messages Slack
        streams to one recipient, who must be named."""
        stream = await client.chat_stream(
            channel=channel,
            thread_ts=thread_ts,
            recipient_team_id=recipient_team_id,
            recipient_user_id=recipient_user_id,
            task_display_mode="timeline",  # task cards between the text, as they happen
        )
        return cls(stream)

    @property
    def ts(self) -> str | None:
        """The streamed message once Slack started it."""
        ts = self._stream.ts
        return None if ts is None else str(ts)

    async def send(self, chunks: Sequence[Chunk]) -> None:
        """Start the stream with ``chunks``, or append them (a flush: nothing is held back)."""
        await self._stream.append(chunks=list(chunks))

    async def stop(self, chunks: Sequence[Chunk] = ()) -> None:
        """End the message with whatever ``chunks`` are left."""
        await self._stream.stop(chunks=list(chunks) or None)


async def stop_left_open(client: AsyncWebClient, *, channel: str, ts: str) -> None:
    """Stop a stream another process started and could not stop (it died mid-answer).

    Ours, not ``ChatStream``'s: a ``ChatStream`` only stops the stream it started itself.
    """
    await client.chat_stopStream(channel=channel, ts=ts)
