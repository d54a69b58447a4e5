"""Holding a claim while its tool runs: the lease is renewed so no other instance takes over.

A claim is written with ``owner`` (this process), ``lease_until`` and a lease ``epoch`` (0,
raised by each takeover). While the decided call's work runs, ``held`` renews the lease every
third of its length, naming the epoch it holds; while storage does not answer it tries every
tenth, so an owner that was only cut off renews as soon as storage is back, well inside the
grace that recovery grants (``agents.deciding._recovery``). If this process dies, nobody
renews it: once it lapsed by more than that grace, any instance's ``recover_interrupted_runs``
takes the claim over at the next epoch. From then on storage refuses this owner's renewal and
its completion (``LeaseLost``): a takeover is final, whoever wakes up later.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from agents._runtime import Runtime
from agents.errors import LeaseLost
from agents.stored._fence import HeldLease, StreamFence
from storage import ClaimRecord, utcnow

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Lease:
    """The claim a decided call's work runs under: its key, and the owner and epoch holding it.

    Every write made for that work (renewals, the completion with its snapshot, memory and
    audit) carries ``owner`` and ``epoch``, and storage refuses it once the claim moved on.
    """

    run_id: str
    """The run of the claim."""
    key: str
    """The claim key (``<tool_call_id>#<round>``)."""
    owner: str | None
    """The instance holding the claim (``Runtime.owner``); None only for a claim completed
    before claims had owners (its completion, written again, is not fenced)."""
    epoch: int = 0
    """The lease epoch it holds: 0 when claimed by a decision, the takeover's when recovered."""

    @classmethod
    def of(cls, claim: ClaimRecord, owner: str | None) -> Lease:
        """The lease ``owner`` holds on ``claim`` (as taken or taken over)."""
        return cls(run_id=claim.run_id, key=claim.key, owner=owner, epoch=claim.epoch)

    def held(self) -> HeldLease:
        """This lease as a stream's fence names it (``AgentStream.fence``)."""
        return HeldLease(run_id=self.run_id, key=self.key, owner=self.owner, epoch=self.epoch)

    def lost(self) -> LeaseLost:
        """The error that abandons the work (storage refused a write made under this lease)."""
        return LeaseLost(self.run_id, self.key, owner=self.owner, epoch=self.epoch)


async def held(
    rt: Runtime, lease: Lease, work: Awaitable[T], *, fence: StreamFence | None = None
) -> T:
    """Await ``work`` while renewing ``lease``; ``LeaseLost`` when a renewal found it taken over.

    ``fence``: the stream announcing the work names ``lease`` on it first, so whoever
    announces it (the Slack edge) can check, before each write, that it is still this owner's.

    The work is not cancelled when the lease is lost (a tool stopped halfway could leave worse
    than one that ran to its end); its result is dropped instead, unannounced.
    """
    if fence is not None:
        fence.hold(rt.storage, lease.held())
    renewal = _Renewal(rt, lease)
    try:
        result = await work
    finally:
        await renewal.stop()
    if renewal.lost:
        raise lease.lost()
    return result


class _Renewal:
    """Renews one claim's lease every third of its length until ``stop``.

    Driven by a timer rather than a task that sleeps: most work ends long before the first
    renewal is due, and cancelling a timer is free where starting and cancelling a task costs
    two loop hops. A task exists only while a renewal is being written.
    """

    def __init__(self, rt: Runtime, lease: Lease) -> None:
        self.rt = rt
        self.lease = lease
        self.lost = False
        """A renewal was refused: another instance took the claim over."""
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
        self._renewing = self._loop.create_task(self._renew(), name=f"lease-{self.lease.run_id}")

    async def _renew(self) -> None:
        rt, lease = self.rt, self.lease
        until = utcnow() + timedelta(seconds=rt.claim_lease_seconds)
        try:
            kept = lease.owner is not None and await rt.storage.renew_lease(
                lease.run_id, lease.key, lease.owner, until, epoch=lease.epoch
            )
        except Exception as exc:
            if not self._failing:
                logger.warning(
                    "could not renew the claim on run %s (%s: %s); the tool goes on, and its "
                    "outcome is written when storage answers again",
                    lease.run_id,
                    type(exc).__name__,
                    exc,
                )
            self._failing = True
        else:
            self._failing = False
            if not kept:
                self.lost = True
                logger.warning(
                    "the claim on run %s was taken over by another instance (its lease lapsed); "
                    "this process drops the call's outcome, the new owner reports it. Check that "
                    "CLAIM_LEASE_SECONDS is longer than pauses and storage outages",
                    lease.run_id,
                )
                return
        # While storage does not answer, try more often: the lease must be renewed as soon as
        # it is back, before the grace that recovery grants ends.
        period = self._period * 0.3 if self._failing else self._period
        self._timer = self._loop.call_later(period, self._due)
