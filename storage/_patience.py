"""``patiently``: THE retry helper for outages, at the bottom of the house so every layer uses it
(the runtime waiting out storage with a decided call's outcome in hand, the Slack edge waiting
out storage, Redis or Slack with a card or an answer owed to a thread).

It tries ``attempt()`` again while ``retry_on`` says the failure is an outage, with exponential
pauses and jitter (``tenacity``: instances that lost the same server do not come back in step),
at most ``longest`` seconds apart, for at most ``seconds``; then the last failure is raised.
``on_outage`` hears of each failure retried (to log an outage once), ``on_back`` of the success
after one; ``sleep`` pauses (tests record it). ``attempt`` must be safe to repeat.

Example:
    >>> done = await patiently(
    ...     lambda: store.commit(change),
    ...     retry_on=lambda exc: isinstance(exc, StorageUnavailable),
    ...     seconds=600,
    ... )
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying, retry_if_exception, stop_after_delay, wait_exponential_jitter

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
