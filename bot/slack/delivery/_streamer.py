"""``ReplyStreamer``: one Slack message that grows as the agent's text arrives.

The first text is posted at once; later text updates the same message at most once per
``min_interval`` seconds (Slack allows about one write per second per channel). Text held back
by the throttle is written by a timer when the interval has passed, so a pause in the stream
(a tool running) never hides it; ``finish()`` writes whatever is still unsent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

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
