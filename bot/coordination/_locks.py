"""One Slack thread at a time: ``ThreadLocks``, and the in-process implementation.

A shared implementation (Redis, for several instances) plugs in through the same protocol.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol


class ThreadLocks(Protocol):
    """Serialises the work of one Slack thread."""

    def hold(self, thread_id: str) -> AbstractAsyncContextManager[None]:
        """``async with locks.hold(thread_id):`` runs alone for that thread."""
        ...


class LocalThreadLocks:
    """An ``asyncio.Lock`` per thread id, forgotten when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[thread_id]
            if users <= 1:
                del self._locks[thread_id]
            else:
                self._locks[thread_id] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
