"""Process each Slack delivery once: by ``event_id`` and by ``channel`` + ``ts``.

Slack retries deliveries, and a message that mentions the bot arrives twice (``app_mention``
and ``message``, with different event ids). The marks live in ``Storage`` key→value with a TTL,
so every instance sharing the storage (or a Redis store) sees them.
"""

from __future__ import annotations

from typing import Protocol


class Marks(Protocol):
    """Where marks live: a ``Storage``, or Redis (``bot.coordination._redis.RedisMarks``)."""

    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        """True when ``key`` was absent and is now set (atomically, for one caller)."""
        ...


DEDUPE_TTL_SECONDS = 2 * 3600
"""Longer than Slack's retry schedule (up to about 6 minutes) with a wide margin."""


class Deduper:
    """``first(...)`` is True exactly once per key within the TTL."""

    def __init__(self, storage: Marks, *, ttl_seconds: float = DEDUPE_TTL_SECONDS) -> None:
        self._storage = storage
        self._ttl = ttl_seconds

    async def first_event(self, event_id: str | None) -> bool:
        """True the first time an ``event_id`` is seen (always True without one)."""
        if not event_id:
            return True
        return await self._storage.add_if_absent(f"slack:event:{event_id}", "1", self._ttl)

    async def first_message(self, team: str, channel: str, ts: str) -> bool:
        """True the first time a message (``channel`` + ``ts``) is seen."""
        key = f"slack:message:{team}:{channel}:{ts}"
        return await self._storage.add_if_absent(key, "1", self._ttl)
