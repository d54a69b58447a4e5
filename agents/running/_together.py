"""``together``: ``asyncio.gather`` for the run loop, minus the task when there is one call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def together(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """The results of ``awaitables``, run concurrently, in order.

    A model turn usually calls one tool: that one is awaited in place, because ``gather``
    would wrap it in a task (a task and two loop hops per turn, for no concurrency); none
    (every call gated) needs no future either.
    """
    if not awaitables:
        return []
    if len(awaitables) == 1:
        return [await awaitables[0]]
    return list(await asyncio.gather(*awaitables))
