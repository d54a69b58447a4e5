"""Contract: grants are found through indexes (issue 35): a gated call's match, a person's active
grants and the count of an agent's usable grants read only what they return, on every backend;
``prune`` deletes the grants that ended before its cutoff."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from storage import RedisStorage, StateChange, Storage
from tests.backends import REDIS_ENV, unique_url
from tests.storage.records import at
from tests.storage.test_grants import grant, use


async def _store(storage: Storage, *grants_: object) -> None:
    for g in grants_:
        await storage.commit(StateChange(grant=g))  # type: ignore[arg-type]


async def test_a_gated_calls_match_returns_only_usable_grants_of_its_tool_in_its_scope(
    storage: Storage,
) -> None:
    in_thread = grant("g1", created_at=at(1))
    in_channel = grant("g2", thread_id=None, resource_id="C1", created_at=at(2))
    thread_of_channel = grant("g3", resource_id="C1", thread_id="T9", created_at=at(3))
    other_tool = grant("g4", tool_name="refund", created_at=at(4))
    other_agent = grant("g5", agent_id="billing", created_at=at(5))
    used_up = grant("g6", max_uses=1, created_at=at(6))
    revoked = grant("g7", created_at=at(7))
    expired = grant("g8", expires_at=at(20), created_at=at(8))
    await _store(storage, in_thread, in_channel, thread_of_channel, other_tool, other_agent)
    await _store(storage, used_up, revoked, expired)
    await storage.commit(use("c1#0", grant_id="g6"))
    await storage.revoke_grant("g7", revoked_by="U1", at=at(9))

    found = await storage.list_grants(
        agent_id="ops",
        tool_name="delete-record",
        thread_id="T1",
        resource_id="C1",
        active_at=at(30),
    )
    in_thread_only = await storage.list_grants(
        agent_id="ops", tool_name="delete-record", thread_id="T1", active_at=at(10)
    )

    assert [g.grant_id for g in found] == ["g2", "g1"]
    assert [g.grant_id for g in in_thread_only] == ["g8", "g1"]


async def test_a_persons_active_grants_and_an_agents_count_leave_out_ended_ones(
    storage: Storage,
) -> None:
    mine = grant("g1", created_at=at(1))
    theirs = grant("g2", granted_by="U2", created_at=at(2))
    spent = grant("g3", max_uses=1, created_at=at(3))
    gone = grant("g4", created_at=at(4))
    billing = grant("g5", agent_id="billing", created_at=at(5))
    await _store(storage, mine, theirs, spent, gone, billing)
    await storage.commit(use("c1#0", grant_id="g3"))
    await storage.revoke_grant("g4", revoked_by="U1", at=at(6))

    active = await storage.list_grants(agent_id="ops", granted_by="U1", active_at=at(10))

    assert [g.grant_id for g in active] == ["g1"]
    assert [g.grant_id for g in await storage.list_grants(granted_by="U1")] == [
        "g5",
        "g4",
        "g3",
        "g1",
    ]
    assert await storage.count_grants(agent_id="ops", active_at=at(10)) == 2
    assert await storage.count_grants(agent_id="ops", active_at=at(4000)) == 0
    assert await storage.count_grants(agent_id="ops") == 4
    assert await storage.count_grants(active_at=at(10)) == 3
    assert await storage.count_grants() == 5


async def test_prune_deletes_the_grants_that_ended_before_the_cutoff(storage: Storage) -> None:
    live = grant("live", expires_at=at(5000))
    expired = grant("expired", expires_at=at(100))
    expires_later = grant("expires-later", expires_at=at(300))
    revoked = grant("revoked", expires_at=at(5000))
    revoked_late = grant("revoked-late", expires_at=at(5000))
    used_up = grant("used-up", max_uses=1, expires_at=at(5000))
    await _store(storage, live, expired, expires_later, revoked, revoked_late, used_up)
    await storage.revoke_grant("revoked", revoked_by="U1", at=at(50))
    await storage.revoke_grant("revoked-late", revoked_by="U1", at=at(400))
    await storage.commit(use("c1#0", grant_id="used-up"))

    report = await storage.prune(before=at(200))

    assert report.grants == 3
    left = {g.grant_id for g in await storage.list_grants()}
    assert left == {"live", "expires-later", "revoked-late"}
    assert await storage.get_grant("expired") is None
    assert await storage.count_grants(agent_id="ops") == 3
    assert (await storage.prune(before=at(200))).grants == 0
    assert (await storage.prune(before=at(6000))).grants == 3
    assert await storage.list_grants(thread_id="T1") == []
    assert await storage.count_grants() == 0


redis_only = pytest.mark.skipif(not os.environ.get(REDIS_ENV), reason=f"{REDIS_ENV} unset")


@redis_only
async def test_redis_matches_a_gated_call_without_reading_10000_unrelated_grants(
    tmp_path: Path,
) -> None:
    async with unique_url("redis", tmp_path) as url:
        store = RedisStorage.from_url(url)
        try:
            for start in range(0, 10_000, 50):  # other tools, threads, channels, agents
                await asyncio.gather(
                    *(
                        store.commit(
                            StateChange(
                                grant=grant(
                                    f"x{n}",
                                    tool_name=f"tool-{n % 7}",
                                    thread_id=f"T{n % 50 + 2}",
                                    resource_id=f"C{n % 30 + 2}",
                                    agent_id=("ops", "billing")[n % 2],
                                    granted_by=f"U{n % 97 + 2}",
                                )
                            )
                        )
                        for n in range(start, start + 50)
                    )
                )
            await _store(store, grant("mine"), grant("ours", thread_id=None, resource_id="C1"))
            assert await store.count_grants(agent_id="ops", active_at=at(10)) == 5002

            async def match() -> list[str]:
                found = await store.list_grants(
                    agent_id="ops",
                    tool_name="delete-record",
                    thread_id="T1",
                    resource_id="C1",
                    active_at=at(10),
                )
                return [g.grant_id for g in found]

            async def home() -> list[str]:
                found = await store.list_grants(agent_id="ops", granted_by="U1", active_at=at(10))
                return [g.grant_id for g in found]

            async def count() -> int:
                return await store.count_grants(agent_id="ops", active_at=at(10))

            assert await match() == ["ours", "mine"]
            matched, match_commands = await _watched(store, match)
            listed, home_commands = await _watched(store, home)
            counted, count_commands = await _watched(store, count)
        finally:
            await store.close()

    assert matched == ["ours", "mine"] and listed == ["ours", "mine"] and counted == 5002
    for commands in (match_commands, home_commands, count_commands):
        assert not [c for c in commands if '"x' in c or ":x" in c]  # no unrelated grant read
    assert len(match_commands) <= 4  # two scope zsets, then the two grants found
    assert len(home_commands) <= 3  # the person's live zset, then their grants
    assert len(count_commands) == 1  # one ZCOUNT


async def _watched(store: RedisStorage, read: object) -> tuple[object, list[str]]:
    """What ``read()`` returned, and the Redis commands of ``store``'s keys it sent (MONITOR)."""
    monitor_client = aioredis.Redis.from_url(os.environ[REDIS_ENV], decode_responses=True)
    sentinel = f"{store.key_prefix}sentinel"
    try:
        async with monitor_client.monitor() as monitor:
            result = await read()  # type: ignore[operator]
            await monitor_client.get(sentinel)
            seen: list[str] = []
            while True:
                line = (await monitor.next_command())["command"]
                if sentinel in line:
                    return result, seen
                if store.key_prefix in line:
                    seen.append(line)
    finally:
        await monitor_client.aclose()


@redis_only
async def test_redis_grants_written_before_the_indexes_are_indexed_when_first_read(
    tmp_path: Path,
) -> None:
    async with unique_url("redis", tmp_path) as url:
        store = RedisStorage.from_url(url)
        try:
            await _store(store, grant("g1"), grant("g2", max_uses=0, created_at=at(1)))
            p = store.key_prefix
            client = aioredis.Redis.from_url(os.environ[REDIS_ENV], decode_responses=True)
            try:  # what the previous version had: the hash and the one listing zset
                keys = [k async for k in client.scan_iter(match=f"{p}grants*")]
                await client.delete(*[k for k in keys if k != f"{p}grants"])
                for g in ("g1", "g2"):
                    await client.hdel(f"{p}grant:{g}", "indexes", "live", "created")
            finally:
                await client.aclose()
            fresh = RedisStorage.from_url(url)
            try:
                found = await fresh.list_grants(
                    agent_id="ops", tool_name="delete-record", thread_id="T1", active_at=at(10)
                )
                counted = await fresh.count_grants(agent_id="ops", active_at=at(10))
                pruned = await fresh.prune(before=at(1000))
            finally:
                await fresh.close()
        finally:
            await store.close()

    assert [g.grant_id for g in found] == ["g1"]
    assert counted == 1
    assert pruned.grants == 1  # g2, used up before the cutoff; g1 is usable until 3600
