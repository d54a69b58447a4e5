"""Matching a gated call against many stored grants on Redis: the ``redis_grants`` curve of
``python -m bench scale``.

``size`` grants unrelated to the call are stored under a key prefix of their own (as the claim
that creates a grant stores it: ``StateChange(grant=...)``): the same agent and tool in other
threads and resources, and other tools in the call's own thread. One grant does apply. Timed:
the gate's own read (``agents.gate``'s ``usable_grant`` asks ``list_grants`` for the call's
agent, tool, thread and resource, usable now), ``MATCHES`` times per size, the sizes in turn;
the median in ms. The prefixes' keys are deleted after.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

import redis.asyncio as aioredis

from storage import GrantRecord, StateChange, Storage, create_storage, utcnow

AGENT_ID = "ops"
TOOL = "delete-record"
THREAD = "slack:T1:C1:1700000000.000001"
RESOURCE = "slack:T1:C1"
MATCHES = 500
_BATCH = 50
"""Grants stored at once (within a Redis client's connection pool)."""


def _grant(n: int, *, applies: bool = False) -> GrantRecord:
    now = utcnow()
    if applies:
        tool, thread, resource = TOOL, THREAD, None
    elif n % 3 == 0:  # another tool, in the call's own thread
        tool, thread, resource = f"tool-{n % 97}", THREAD, None
    elif n % 3 == 1:  # the same tool, another thread
        tool, thread, resource = TOOL, f"slack:T1:C{n % 50}:{n}.000000", None
    else:  # the same tool, another resource
        tool, thread, resource = TOOL, None, f"slack:T1:C{n}"
    return GrantRecord(
        grant_id=f"grant-{n:07d}",
        agent_id=AGENT_ID,
        tool_name=tool,
        agent_path=[AGENT_ID],
        thread_id=thread,
        resource_id=resource,
        pins={"id": f"rec-{n}"},
        granted_by="UGRANTOR",
        created_at=now,
        expires_at=now + timedelta(hours=1),
        max_uses=10,
    )


async def _fill(store: Storage, size: int) -> None:
    for start in range(0, size, _BATCH):
        batch = [_grant(n) for n in range(start, min(size, start + _BATCH))]
        await asyncio.gather(*(store.commit(StateChange(grant=g)) for g in batch))
    await store.commit(StateChange(grant=_grant(size, applies=True)))


async def _drop(base: str, prefix: str) -> None:
    client = aioredis.Redis.from_url(base)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.unlink(*keys[start : start + 1000])
    finally:
        await client.aclose()


async def _lookup_ms(store: Storage, size: int) -> float:
    """One timed lookup (ms), checked to find the one grant that applies."""
    started = time.perf_counter()
    found = await store.list_grants(
        agent_id=AGENT_ID,
        tool_name=TOOL,
        thread_id=THREAD,
        resource_id=RESOURCE,
        active_at=utcnow(),
    )
    took = (time.perf_counter() - started) * 1000
    if [g.grant_id for g in found] != [f"grant-{size:07d}"]:
        raise RuntimeError(f"the lookup found {len(found)} grants, expected the one")
    return took


async def match_curve(
    redis_url: str, sizes: list[int], fits: Callable[[float], bool]
) -> tuple[dict[int, float], list[int]]:
    """Median ms of the gate's grant lookup with each of ``sizes`` unrelated grants stored at
    ``redis_url`` (each under a fresh ``key_prefix``, deleted after): every size is filled
    first, then the lookups are timed in turn, one per size a round, so whatever else loads
    the machine weighs on every size alike. A size past the second is filled only when
    ``fits(estimated seconds)``; (points, sizes skipped)."""
    stores: dict[int, tuple[Storage, str]] = {}
    skipped: list[int] = []
    last: tuple[int, float] | None = None
    try:
        for n, size in enumerate(sizes):
            if n >= 2 and last is not None and not fits(last[1] * size / last[0]):
                skipped = sizes[n:]
                break
            prefix = f"bench-grants-{uuid.uuid4().hex[:12]}:"
            url = f"{redis_url}{'&' if '?' in redis_url else '?'}key_prefix={prefix}"
            store = create_storage(url)
            stores[size] = (store, prefix)
            started = time.monotonic()
            await _fill(store, size)
            last = (size, time.monotonic() - started)
        times: dict[int, list[float]] = {size: [] for size in stores}
        for round_ in range(MATCHES + 5):
            for size, (store, _) in stores.items():
                took = await _lookup_ms(store, size)
                if round_ >= 5:  # the first rounds warm the connections up
                    times[size].append(took)
        return {size: statistics.median(t) for size, t in times.items()}, skipped
    finally:
        for store, prefix in stores.values():
            await store.close()
            await _drop(redis_url, prefix)
