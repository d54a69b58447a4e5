"""``ReplyStreamer``: one Slack message that grows as the agent's text arrives.

The first text is posted at once; later text updates the same message at most once per
``min_interval`` seconds (Slack allows about one write per second per channel), and ``finish()``
writes whatever is still unsent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from slack_sdk.web.async_client import AsyncWebClient

from bot._blocks import answer_text


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
    ) -> None:
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._min_interval = min_interval
        self._clock = clock
        self._text = ""
        self._sent = ""
        self._ts: str | None = None
        self._sent_at = 0.0

    @property
    def ts(self) -> str | None:
        """The ``ts`` of the reply once posted."""
        return self._ts

    async def append(self, text: str) -> None:
        """Add text; writes to Slack when the throttle allows."""
        self._text += text
        if self._text.strip() and self._clock() - self._sent_at >= self._min_interval:
            await self._write()

    async def finish(self) -> None:
        """Write the text not sent yet; the next ``append`` starts a new message."""
        if self._text.strip() and self._text != self._sent:
            await self._write()
        self._text, self._sent, self._ts = "", "", None

    async def _write(self) -> None:
        text = answer_text(self._text)
        if self._ts is None:
            response = await self._client.chat_postMessage(
                channel=self._channel, thread_ts=self._thread_ts, text=text
            )
            self._ts = str(response["ts"])
        else:
            await self._client.chat_update(channel=self._channel, ts=self._ts, text=text)
        self._sent = self._text
        self._sent_at = self._clock()
