"""``RedisEdge``: ``RedisStorage``'s edge records, in key spaces of their own.

Layout under the key prefix::

    card:{run_id}            hash: tool_call_id → card JSON
    cards:posted             zset of [run_id, tool_call_id] JSON, score = posted_at (prune)
    outbox:entry:{id}        hash: doc (entry JSON as put), attempts, next_try_at (ISO 8601)
    outbox:queue             zset of entry ids, score = created_at (listing order)
    outbox:due               zset of entry ids, score = next_try_at (``take_outbox``)
    layout:edge              set once what the edge kept in audit and memory before these
                             records existed was moved in (``storage.redis._edge_layout``)

A card and its audit events are one script call; taking an outbox entry is one script that
checks it is due, counts the attempt and moves ``next_try_at``. The entry's JSON is never
re-encoded in Lua (cjson would turn an empty list into an object): attempts and the next try
live beside it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._records import AuditEvent, CardRecord, OutboxEntry
from storage.redis._change import audit_indexes, member
from storage.redis._edge_layout import RedisEdgeLayout
from storage.redis._scripts import AUDIT_EVENTS

EDGE_METHODS = (
    "put_card",
    "get_card",
    "list_cards",
    "delete_card",
    "put_outbox",
    "list_outbox",
    "take_outbox",
    "remove_outbox",
)
"""The protocol methods of this half (each wrapped like the others for ``StorageUnavailable``)."""

_PUT_CARD = (
    AUDIT_EVENTS
    + """
-- ARGV: prefix, JSON {hash, field, doc, member, score, audit = [{doc, score, indexes}]}
local p = ARGV[1]
local c = cjson.decode(ARGV[2])
redis.call('HSET', c.hash, c.field, c.doc)
redis.call('ZADD', p .. 'cards:posted', c.score, c.member)
append_audit(p, c.audit)
return 1
"""
)

_TAKE_OUTBOX = """
-- KEYS: the entry hash, the due zset. ARGV: id, now score, retry score, retry ISO 8601.
-- Returns {doc, attempts} when the entry was due (and is now held until retry), else nil.
local due = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then
  return nil
end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('HSET', KEYS[1], 'next_try_at', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return {redis.call('HGET', KEYS[1], 'doc'), attempts}
"""


class RedisEdge(RedisEdgeLayout):
    """The card and outbox half of ``RedisStorage`` (on the client and prefix of
    ``RedisClaims``); data kept before these records existed is moved in on first read."""

    _r: aioredis.Redis
    _p: str

    @functools.cached_property
    def _put_card_script(self) -> AsyncScript:
        return self._r.register_script(_PUT_CARD)

    @functools.cached_property
    def _take_outbox_script(self) -> AsyncScript:
        return self._r.register_script(_TAKE_OUTBOX)

    # -- cards -----------------------------------------------------------------------------
    async def put_card(self, record: CardRecord, *, audit: Sequence[AuditEvent] = ()) -> None:
        args = {
            "hash": f"{self._p}card:{record.run_id}",
            "field": record.tool_call_id,
            "doc": codec.dumps(record),
            "member": member(record.run_id, record.tool_call_id),
            "score": str(codec.score(record.posted_at)),
            "audit": [
                {
                    "doc": codec.dumps(e),
                    "score": str(codec.score(e.at)),
                    "indexes": audit_indexes(self._p, e),
                }
                for e in audit
            ],
        }
        await self._put_card_script(args=[self._p, json.dumps(args, separators=(",", ":"))])

    async def get_card(self, run_id: str, tool_call_id: str) -> CardRecord | None:
        await self._edge_layout()
        doc = await self._r.hget(f"{self._p}card:{run_id}", tool_call_id)
        return None if doc is None else codec.loads(CardRecord, doc)

    async def list_cards(self, run_id: str) -> list[CardRecord]:
        await self._edge_layout()
        found = [
            codec.loads(CardRecord, doc) for doc in await self._r.hvals(f"{self._p}card:{run_id}")
        ]
        return sorted(found, key=lambda c: (c.posted_at, c.tool_call_id))

    async def delete_card(self, run_id: str, tool_call_id: str) -> bool:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hdel(f"{self._p}card:{run_id}", tool_call_id)
            pipe.zrem(f"{self._p}cards:posted", member(run_id, tool_call_id))
            deleted, _ = await pipe.execute()
        return int(deleted) == 1

    # -- outbox ----------------------------------------------------------------------------
    async def put_outbox(self, entry: OutboxEntry) -> None:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.hset(
                f"{self._p}outbox:entry:{entry.id}",
                mapping={
                    "doc": codec.dumps(entry),
                    "attempts": str(entry.attempts),
                    "next_try_at": codec.stamp(entry.next_try_at).isoformat(),
                },
            )
            pipe.zadd(f"{self._p}outbox:queue", {entry.id: codec.score(entry.created_at)})
            pipe.zadd(f"{self._p}outbox:due", {entry.id: codec.score(entry.next_try_at)})
            await pipe.execute()

    async def list_outbox(
        self, *, due_at: datetime | None = None, limit: int | None = None
    ) -> list[OutboxEntry]:
        if limit is not None and limit <= 0:
            return []
        await self._edge_layout()
        ids = [_text(i) for i in await self._r.zrange(f"{self._p}outbox:queue", 0, -1)]
        if not ids:
            return []
        async with self._r.pipeline(transaction=False) as pipe:
            for entry_id in ids:
                pipe.hmget(f"{self._p}outbox:entry:{entry_id}", ["doc", "attempts", "next_try_at"])
            replies = await pipe.execute()
        found: list[OutboxEntry] = []
        for doc, attempts, next_try_at in replies:
            if doc is None:
                continue  # removed between the two reads
            entry = _entry(doc, attempts, next_try_at)
            if due_at is None or entry.next_try_at <= due_at:
                found.append(entry)
        return found if limit is None else found[:limit]

    async def take_outbox(
        self, entry_id: str, *, now: datetime, retry_at: datetime
    ) -> OutboxEntry | None:
        await self._edge_layout()
        retry_iso = codec.stamp(retry_at).isoformat()
        reply = await self._take_outbox_script(
            keys=[f"{self._p}outbox:entry:{entry_id}", f"{self._p}outbox:due"],
            args=[entry_id, codec.score(now), codec.score(retry_at), retry_iso],
        )
        if reply is None:
            return None
        doc, attempts = reply
        return _entry(doc, attempts, retry_iso)

    async def remove_outbox(self, entry_id: str) -> bool:
        async with self._r.pipeline(transaction=True) as pipe:
            pipe.delete(f"{self._p}outbox:entry:{entry_id}")
            pipe.zrem(f"{self._p}outbox:queue", entry_id)
            pipe.zrem(f"{self._p}outbox:due", entry_id)
            deleted, _, _ = await pipe.execute()
        return int(deleted) == 1


def _entry(doc: Any, attempts: Any, next_try_at: Any) -> OutboxEntry:
    fields = json.loads(doc)
    fields["attempts"] = int(attempts)
    fields["next_try_at"] = _text(next_try_at)
    return codec.from_document(OutboxEntry, fields)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
