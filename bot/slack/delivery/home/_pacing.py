"""Which Home tabs wait to be published again, and how fast Slack lets us (no Slack call here).

``HomeQueue`` holds each viewer at most once, with when their republish is due: a change marks
its affected viewers due ``COALESCE_SECONDS`` later, and further changes before then add nothing
(one publish, built when it goes out, so it shows the latest state). ``TokenBucket`` paces the
publishes within Slack's limit for ``views.publish`` (Tier 4: 100+ a minute per workspace,
bursts allowed), and a 429 pauses it for its ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from slack_sdk.web.async_client import AsyncWebClient

PUBLISHES_PER_MINUTE = 100.0
"""The pace of republishes: Slack's Tier 4 (``views.publish``) floor, 100 a minute."""
BURST = 20
"""Publishes that may go out at once before the pace applies (Tier 4 tolerates bursts)."""
COALESCE_SECONDS = 0.5
"""How long a change waits for more changes before its viewers' Home tabs are published."""
RATE_LIMITED_TRIES = 5
"""Rate-limited publishes of one viewer in a row before giving up on them (logged)."""

T = TypeVar("T")


class TokenBucket:
    """``per_minute`` tokens a minute, at most ``burst`` saved; ``pause`` empties it until a
    moment (Slack's ``Retry-After``)."""

    def __init__(
        self,
        *,
        per_minute: float = PUBLISHES_PER_MINUTE,
        burst: int = BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._rate = per_minute / 60.0
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self._resume = -math.inf

    def _refill(self) -> None:
        now = self._clock()
        if now < self._resume:
            self._at = now
            return
        since = now - max(self._at, self._resume)
        self._tokens = min(self._burst, self._tokens + since * self._rate)
        self._at = now

    async def take(self) -> None:
        """Wait for a token (and for the end of a pause), then use it."""
        while True:
            self._refill()
            now = self._clock()
            if now < self._resume:
                await asyncio.sleep(self._resume - now)
            elif self._tokens >= 1.0:
                self._tokens -= 1.0
                return
            else:
                await asyncio.sleep((1.0 - self._tokens) / self._rate)

    def spend(self) -> None:
        """Use a token if there is one, never waiting: a publish a person asked for (they
        opened the tab) goes out at once and slows the republishes after it."""
        self._refill()
        self._tokens = max(0.0, self._tokens - 1.0)

    def pause(self, seconds: float) -> None:
        """No token for ``seconds`` (Slack answered 429 with this ``Retry-After``)."""
        self._refill()
        self._tokens = 0.0
        self._resume = max(self._resume, self._clock() + max(0.0, seconds))


class HomeQueue(Generic[T]):
    """Viewers whose Home tab is due again (each once), the bucket their publishes take from,
    and a cache (``T``: what one round of views is built from) dropped at every change."""

    def __init__(
        self,
        *,
        bucket: TokenBucket | None = None,
        coalesce_seconds: float = COALESCE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.bucket = bucket or TokenBucket(clock=clock)
        """The pace of every ``views.publish``."""
        self.coalesce_seconds = coalesce_seconds
        """How long a change waits for more before its viewers are published."""
        self._clock = clock
        self._due: dict[str, float] = {}
        self._tries: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._running = False
        self._cache: tuple[float, T] | None = None
        self.client: AsyncWebClient | None = None
        """The Web API client publishes go through (made once, without the SDK's own 429
        retries: a 429 pauses this queue instead)."""

    def request(self, users: Iterable[str], *, delay: float | None = None) -> bool:
        """Mark ``users`` due in ``delay`` seconds (``coalesce_seconds`` by default; a user
        due sooner stays so). True: no flush is running and the caller must start one."""
        due = self._clock() + (self.coalesce_seconds if delay is None else delay)
        for user in users:
            self._due[user] = min(self._due.get(user, math.inf), due)
        self._cache = None
        self._wake.set()
        return self.start()

    def start(self) -> bool:
        """True: someone is due and no flush runs: the caller must start one now."""
        if self._running or not self._due:
            return False
        self._running = True
        return True

    async def wait_due(self) -> bool:
        """Wait until someone's republish is due. False: nobody is due, and the flush that
        asked must end (the next ``request`` starts another)."""
        while self._due:
            wait = min(self._due.values()) - self._clock()
            if wait <= 0:
                return True
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()
        self._running = False
        return False

    def pop_due(self) -> str | None:
        """The viewer due soonest, if their time has come (taken off the queue: a change
        after this marks them due again)."""
        if not self._due:
            return None
        user = min(self._due, key=self._due.__getitem__)
        if self._due[user] > self._clock():
            return None
        del self._due[user]
        return user

    def stopped(self) -> None:
        """The flush ended without ``next_due`` saying so (cancelled, failed)."""
        self._running = False

    def cached(self, make: Callable[[], T]) -> T:
        """What views are built from now: reused until a change, or for ``coalesce_seconds``
        at most (so a long paced round sees what was added meanwhile)."""
        now = self._clock()
        if self._cache is None or now - self._cache[0] > max(self.coalesce_seconds, 1.0):
            self._cache = (now, make())
        return self._cache[1]

    def published(self, user: str) -> None:
        """``user``'s Home tab went out."""
        self._tries.pop(user, None)

    def rate_limited(self, user: str, retry_after: float) -> bool:
        """Slack answered 429 for ``user``: pause every publish for ``retry_after`` seconds and
        mark them due again after it. False: they were rate limited ``RATE_LIMITED_TRIES`` times
        in a row, and are given up (the caller logs it)."""
        self.bucket.pause(retry_after)
        tries = self._tries.get(user, 0) + 1
        if tries >= RATE_LIMITED_TRIES:
            self._tries.pop(user, None)
            return False
        self._tries[user] = tries
        self._due[user] = min(self._due.get(user, math.inf), self._clock() + retry_after)
        self._wake.set()
        return True
