"""Holding a claim while its tool runs: the lease is renewed so no other instance takes over.

A claim is written with ``owner`` (this process) and ``lease_until``. While the decided call's
work runs, ``held`` renews the lease every third of its length. If this process dies, nobody
renews it: once it lapses, any instance's ``recover_interrupted_runs`` takes the claim over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from datetime import timedelta
from typing import TypeVar

from agents._runtime import Runtime
from storage import utcnow

logger = logging.getLogger(__name__)

T = TypeVar("T")


async def held(rt: Runtime, run_id: str, key: str, work: Awaitable[T]) -> T:
    """Await ``work`` while renewing the lease of claim ``key`` of ``run_id``."""
    renewal = _Renewal(rt, run_id, key)
    try:
        return await work
    finally:
        await renewal.stop()


class _Renewal:
    """Renews one claim's lease every third of its length until ``stop``.

    Driven by a timer rather than a task that sleeps: most work ends long before the first
    renewal is due, and cancelling a timer is free where starting and cancelling a task costs
    two loop hops. A task exists only while a renewal is being written.
    """

    def __init__(self, rt: Runtime, run_id: str, key: str) -> None:
        self.rt = rt
        self.run_id = run_id
        self.key = key
        self._period = rt.claim_lease_seconds / 3
        self._loop = asyncio.get_running_loop()
        self._failing = False
        self._renewing: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(self._period, self._due)

    async def stop(self) -> None:
        """No more renewals; waits for one being written (cancelled) to end."""
        if self._timer is not None:
            self._timer.cancel()
        renewing = self._renewing
        if renewing is not None and not renewing.done():
            renewing.cancel()
            await asyncio.gather(renewing, return_exceptions=True)

    def _due(self) -> None:
        self._timer = None
        self._renewing = self._loop.create_task(self._renew(), name=f"lease-{self.run_id}")

    async def _renew(self) -> None:
        rt = self.rt
        until = utcnow() + timedelta(seconds=rt.claim_lease_seconds)
        try:
            kept = await rt.storage.renew_lease(self.run_id, self.key, rt.owner, until)
        except Exception as exc:
            if not self._failing:
                logger.warning(
                    "could not renew the claim on run %s (%s: %s); the tool goes on, and its "
                    "outcome is written when storage answers again",
                    self.run_id,
                    type(exc).__name__,
                    exc,
                )
            self._failing = True
        else:
            self._failing = False
            if not kept:
                logger.warning(
                    "the claim on run %s was taken over by another instance (its lease lapsed); "
                    "check that CLAIM_LEASE_SECONDS is longer than storage outages",
                    self.run_id,
                )
                return
        self._timer = self._loop.call_later(self._period, self._due)
