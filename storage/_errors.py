"""Errors raised by storage backends.

StorageError
├── StorageConfigError      the storage URL cannot be used
├── StorageUnavailable      the database / Redis server does not answer (try again later)
├── SnapshotVersionConflict another process changed a snapshot first
├── StaleLease              a claim was taken over: its old owner may no longer write for it
└── GrantUnavailable        a standing grant is revoked, expired or used up (nothing written)

``patiently`` is THE retry helper for outages, here at the bottom of the house so every layer
waits one out the same way (the runtime with a decided call's outcome in hand, the Slack edge
with a card or an answer owed to a thread): it tries ``attempt()`` again while ``retry_on``
says the failure is an outage, with exponential pauses and jitter (``tenacity``: instances that
lost the same server do not come back in step), at most ``longest`` seconds apart, for at most
``seconds``; then the last failure is raised. ``on_outage`` hears of each failure retried (to
log an outage once), ``on_back`` of the success after one; ``sleep`` pauses (tests record it).
``attempt`` must be safe to repeat.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential_jitter


class StorageError(Exception):
    """Root of every error raised by the ``storage`` package."""


class StorageConfigError(StorageError):
    """The storage URL names no backend or cannot be opened."""


class StorageUnavailable(StorageError):
    """The storage server could not be reached, or the connection broke: nothing was written
    (for a write, the transaction did not commit, unless the server committed it just before
    the connection broke). Retry once the server answers again."""

    def __init__(self, where: str, cause: BaseException) -> None:
        self.where = where
        """The server, as its URL without password."""
        super().__init__(
            f"storage at {where} is unreachable ({type(cause).__name__}: {cause}); check that "
            "the server is running and STORAGE_URL points at it"
        )


class SnapshotVersionConflict(StorageError):
    """A snapshot was written by someone else since it was read; reload it and retry."""

    def __init__(self, run_id: str, expected_version: int) -> None:
        self.run_id = run_id
        self.expected_version = expected_version
        super().__init__(
            f"snapshot of run {run_id!r} is no longer at version {expected_version}: "
            "another process changed it; reload the snapshot and apply the change again"
        )


class StaleLease(StorageError):
    """A renewal or a fenced completion on behalf of an owner whose lease epoch is no longer the
    claim's: another instance took the claim over. Nothing was written; the old owner must
    abandon the work (the agents package raises it as ``agents.errors.LeaseLost``)."""

    def __init__(
        self, run_id: str, key: str, *, owner: str | None, epoch: int, held: str | None = None
    ) -> None:
        self.run_id = run_id
        self.key = key
        self.owner = owner
        """The owner the refused write was made for."""
        self.epoch = epoch
        """The epoch the refused write was made with."""
        super().__init__(
            f"claim {key!r} of run {run_id!r} is no longer held by {owner!r} at epoch {epoch}"
            + (f" (now: {held})" if held else "")
            + ": another instance took it over after its lease lapsed; drop this write and the "
            "run (the new owner reports the outcome), and make CLAIM_LEASE_SECONDS longer than "
            "pauses of this process"
        )


class GrantUnavailable(StorageError):
    """A change used a standing grant that may not be used now (revoked, expired, every use
    taken, or unknown): nothing of the change was written. The call it would have approved
    waits for a person as usual."""

    def __init__(self, grant_id: str, why: str) -> None:
        self.grant_id = grant_id
        """The grant the change tried to use."""
        self.why = why
        """Why not, in words."""
        super().__init__(
            f"grant {grant_id!r} approves nothing more: {why}; the call waits for a person"
        )


T = TypeVar("T")


async def patiently(
    attempt: Callable[[], Awaitable[T]],
    *,
    retry_on: Callable[[BaseException], bool],
    seconds: float,
    first: float = 0.1,
    longest: float = 5.0,
    on_outage: Callable[[BaseException], None] | None = None,
    on_back: Callable[[], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """``attempt()``, tried again through an outage (see the module docstring)."""
    failed = False

    def before_sleep(state: object) -> None:
        nonlocal failed
        failed = True
        outcome = getattr(state, "outcome", None)
        exc = outcome.exception() if outcome is not None else None
        if on_outage is not None and exc is not None:
            on_outage(exc)

    retrying = AsyncRetrying(
        retry=retry_if_exception(retry_on),
        wait=wait_exponential_jitter(multiplier=first, max=longest, jitter=first),
        stop=stop_after_delay(seconds),
        before_sleep=before_sleep,
        reraise=True,
        sleep=sleep,
    )
    async for round_ in retrying:  # ends after the first success; reraises the last failure
        with round_:
            done = await attempt()
    if failed and on_back is not None:
        on_back()
    return done
