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
    renewing = asyncio.get_running_loop().create_task(
        _renew(rt, run_id, key), name=f"lease-{run_id}"
    )
    try:
        return await work
    finally:
        renewing.cancel()
        await asyncio.gather(renewing, return_exceptions=True)


async def _renew(rt: Runtime, run_id: str, key: str) -> None:
    period = rt.claim_lease_seconds / 3
    failing = False
    while True:
        await asyncio.sleep(period)
        until = utcnow() + timedelta(seconds=rt.claim_lease_seconds)
        try:
            kept = await rt.storage.renew_lease(run_id, key, rt.owner, until)
        except Exception as exc:
            if not failing:
                logger.warning(
                    "could not renew the claim on run %s (%s: %s); the tool goes on, and its "
                    "outcome is written when storage answers again",
                    run_id,
                    type(exc).__name__,
                    exc,
                )
            failing = True
            continue
        failing = False
        if not kept:
            logger.warning(
                "the claim on run %s was taken over by another instance (its lease lapsed); "
                "check that CLAIM_LEASE_SECONDS is longer than storage outages",
                run_id,
            )
            return
