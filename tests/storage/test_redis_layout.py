"""Redis data written before leases and ``snaps:decidable`` existed keeps working."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from storage import RedisStorage
from tests.backends import REDIS_ENV, unique_url
from tests.storage.records import T0, at, snapshot

pytestmark = pytest.mark.skipif(not os.environ.get(REDIS_ENV), reason=f"{REDIS_ENV} unset")


async def test_old_snapshots_list_as_decidable_and_old_claims_are_taken_over(
    tmp_path: Path,
) -> None:
    async with unique_url("redis", tmp_path) as url:
        store = RedisStorage.from_url(url)
        try:
            await store.save_snapshot(snapshot("new-undecidable", second=2, decidable=False))
            p = store.key_prefix
            client = aioredis.Redis.from_url(os.environ[REDIS_ENV], decode_responses=True)
            try:  # what the previous version wrote: no decidable field, no leases zset entry
                await client.hset(
                    f"{p}snap:old",
                    mapping={"version": "1", "doc": _old_doc(), "agent": "ops"},
                )
                await client.zadd(f"{p}snaps:all", {"old": 1})
                await client.hset(f"{p}claims:run-1", "k#0", _old_claim())
                await client.zadd(f"{p}claims:unfinished", {'["run-1","k#0"]': 1})
            finally:
                await client.aclose()

            found, total = await store.list_snapshots(decidable_only=True)
            taken = await store.take_over_expired_claims("B", now=at(5), lease_until=at(9))
        finally:
            await store.close()

    assert ([s.run_id for s in found], total) == (["old"], 1)
    assert [(c.key, c.owner, c.lease_until) for c in taken] == [("k#0", "B", at(9))]


def _old_doc() -> str:
    return (
        '{"run_id":"old","agent_id":"ops","thread_id":null,"resource_id":null,'
        f'"suspended_at":"{T0.isoformat()}","version":1,"data":{{}}}}'
    )


def _old_claim() -> str:
    return (
        '{"run_id":"run-1","key":"k#0","tool_call_id":null,"decision":"approved",'
        f'"decided_by":"U1","decided_at":"{T0.isoformat()}","detail":{{}},"status":"claimed",'
        '"outcome":null,"completed_at":null}'
    )
