"""Redis data written before leases, ``snaps:decidable`` and the due index existed keeps working."""

from __future__ import annotations

import dataclasses
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


async def test_old_pending_snapshots_are_due_at_once_and_indexed_by_their_agent(
    tmp_path: Path,
) -> None:
    async with unique_url("redis", tmp_path) as url:
        store = RedisStorage.from_url(url)
        try:
            await store.save_snapshot(snapshot("new", due_at=at(60)))
            p = store.key_prefix
            client = aioredis.Redis.from_url(os.environ[REDIS_ENV], decode_responses=True)
            try:  # what the previous version wrote: no due_at in the document, no due zset
                await client.hset(
                    f"{p}snap:old",
                    mapping={"version": "1", "doc": _old_doc(), "agent": "ops", "decidable": "1"},
                )
                await client.zadd(f"{p}snaps:all", {"old": 1})
                await client.zadd(f"{p}snaps:decidable", {"old": 1})
            finally:
                await client.aclose()

            due = await store.list_due(agent_id="ops", until=at(10))
            moved = await store.reschedule("old", version=1, due_at=at(90))
            later = await store.list_due(agent_id="ops", until=at(100))
        finally:
            await store.close()

    assert [s.run_id for s in due] == ["old"]  # due from when it suspended (score 1 µs)
    assert moved and [(s.run_id, s.due_at) for s in later] == [("new", at(60)), ("old", at(90))]


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


async def test_cards_in_audit_and_the_outbox_memory_thread_move_into_their_records(
    tmp_path: Path,
) -> None:
    from datetime import timedelta

    from storage import AuditEvent, MessageRecord, ThreadRecord, utcnow

    outbox = "countersign:slack-outbox"
    now = utcnow()
    shown = {"tool_name": "delete_record", "args": {}, "fingerprint": "f"}

    def presented(n: int, ts: str, **data: object) -> AuditEvent:
        return AuditEvent(
            id=f"e{n}", at=at(n), kind="presented", run_id="r1", tool_call_id="c1",
            thread_id="slack:T9:C1:0.5",
            data={"channel": "C1", "ts": ts, "thread_ts": "0.5", **shown, **data},
        )  # fmt: skip

    def write(n: int, created: object) -> MessageRecord:
        content = {"id": f"w{n}", "method": "chat.update", "channel": "C1", "ts": "1.0",
                   "text": "Approved", "blocks": []}  # fmt: skip
        return MessageRecord(id=f"w{n}", thread_id=outbox, resource_id=None, run_id=None,
                             role="system", content=content, created_at=created)  # fmt: skip

    async with unique_url("redis", tmp_path) as url:
        old = RedisStorage.from_url(url)  # what the previous version wrote, through its calls
        try:
            await old.append_audit(presented(1, "1.0"))
            await old.append_audit(presented(2, "2.0", team="T1"))
            await old.append_audit(presented(0, "0.5"))  # older, written after
            no_team = dataclasses.replace(presented(4, "4.0"), id="e4", tool_call_id="c2")
            await old.append_audit(no_team)  # before cards stored their workspace
            await old.save_thread(
                ThreadRecord(thread_id=outbox, resource_id=None, created_at=now, updated_at=now)
            )
            await old.append_messages([write(1, now), write(2, now)])
            await old.append_messages([write(3, now - timedelta(days=31))])
            await old.add_if_absent("slack:outbox:done:w1", "1", 3600)
        finally:
            await old.close()

        store = RedisStorage.from_url(url)
        again = RedisStorage.from_url(url)
        try:
            card = await store.get_card("r1", "c1")
            teamless = await store.get_card("r1", "c2")
            entries = await store.list_outbox()
            left = await store.list_messages(outbox), await store.get_thread(outbox)
            events = await store.query_audit(run_id="r1")
            assert await again.list_outbox() == entries  # a second instance moves nothing twice
        finally:
            await store.close()
            await again.close()

    assert card is not None
    assert (card.team, card.ts, card.thread_ts, card.posted_at) == ("T1", "2.0", "0.5", at(2))
    assert card.shown == shown
    assert teamless is not None and (teamless.team, teamless.ts) == ("T9", "4.0")
    assert [(e.id, e.attempts, e.write["blocks"]) for e in entries] == [("w2", 0, [])]
    assert left == ([], None)
    assert len(events) == 4  # presentations stay audited
