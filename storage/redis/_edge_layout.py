"""``RedisEdgeLayout``: once per key prefix, what the Slack edge kept before it had records of
its own moves into them (the Redis counterpart of SQL migration ``0007``).

- Cards: the newest ``presented`` audit event of each call becomes its ``card:{run_id}`` field
  (``HSETNX``: a card posted since is newer and stays); the events stay (presentations are
  audited).
- Outbox: the messages of the memory thread ``countersign:slack-outbox`` become outbox entries,
  except writes with a ``slack:outbox:done:<id>`` mark and writes older than that mark's 30 days;
  one script writes them and deletes the thread, and only if the thread is still as read.

``layout:edge`` says it was done; ``layout:edge:busy`` keeps two instances from doing it at
once (the other one reads the new records meanwhile, and tries again on its next call).
"""

from __future__ import annotations

import json
from datetime import timedelta

import redis.asyncio as aioredis

from storage import _codec as codec
from storage._records import AuditEvent, CardRecord, MessageRecord, OutboxEntry, utcnow
from storage.redis._change import member

_OUTBOX_THREAD = "countersign:slack-outbox"
_DONE_MARK = "slack:outbox:done:"
_DONE_DAYS = 30
_WHERE = ("channel", "ts", "thread_ts", "team")
_BUSY_SECONDS = 300

_MOVE_OUTBOX = """
-- KEYS: the outbox thread's messages list, its thread key. ARGV: prefix, messages read,
-- JSON list of [id, doc, created score, next try ISO 8601]. Writes each entry not there yet
-- and deletes the thread, only while the list still holds the messages read; returns 1, else 0.
local p = ARGV[1]
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[2]) then
  return 0
end
for _, e in ipairs(cjson.decode(ARGV[3])) do
  local key = p .. 'outbox:entry:' .. e[1]
  if redis.call('EXISTS', key) == 0 then
    redis.call('HSET', key, 'doc', e[2], 'attempts', '0', 'next_try_at', e[4])
    redis.call('ZADD', p .. 'outbox:queue', e[3], e[1])
    redis.call('ZADD', p .. 'outbox:due', e[3], e[1])
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"""


class RedisEdgeLayout:
    """Moves the edge's old data into its records on first use (see the module docstring)."""

    _r: aioredis.Redis
    _p: str
    _edge_laid_out: bool = False

    async def _edge_layout(self) -> None:
        """Make sure the old data was moved (a flag after the first time: no round trip)."""
        if self._edge_laid_out:
            return
        p = self._p
        if await self._r.exists(f"{p}layout:edge"):
            self._edge_laid_out = True
            return
        if not await self._r.set(f"{p}layout:edge:busy", "1", nx=True, ex=_BUSY_SECONDS):
            return  # another instance is moving it
        try:
            await self._move_cards()
            if await self._move_outbox():
                await self._r.set(f"{p}layout:edge", "1")
                self._edge_laid_out = True
        finally:
            await self._r.delete(f"{p}layout:edge:busy")

    async def _move_cards(self) -> None:
        newest: dict[tuple[str, str], tuple[str, AuditEvent]] = {}
        async for seq, raw in self._r.hscan_iter(f"{self._p}audit:events", count=1000):
            doc = raw.decode() if isinstance(raw, bytes) else str(raw)
            if '"kind":"presented"' not in doc:
                continue
            try:
                event = codec.loads(AuditEvent, doc)
            except (ValueError, TypeError):
                continue  # not an event this version can read: left in the audit log
            if event.kind != "presented" or not event.run_id or not event.tool_call_id:
                continue
            ids = (event.run_id, event.tool_call_id)
            if ids not in newest or (newest[ids][1].at, newest[ids][0]) < (event.at, seq):
                newest[ids] = (seq, event)
        cards = [card for _, event in newest.values() if (card := _card(event)) is not None]
        async with self._r.pipeline(transaction=False) as pipe:
            for card in cards:
                pipe.hsetnx(f"{self._p}card:{card.run_id}", card.tool_call_id, codec.dumps(card))
                pipe.zadd(
                    f"{self._p}cards:posted",
                    {member(card.run_id, card.tool_call_id): codec.score(card.posted_at)},
                    nx=True,
                )
            await pipe.execute()

    async def _move_outbox(self) -> bool:
        key = f"{self._p}msgs:{_OUTBOX_THREAD}"
        docs = await self._r.lrange(key, 0, -1)
        stale = utcnow() - timedelta(days=_DONE_DAYS)
        entries: list[list[str | int]] = []
        for doc in docs:
            try:
                message = codec.loads(MessageRecord, doc)
            except (ValueError, TypeError):
                continue  # not a message this version can read: dropped with the thread
            write_id = str(message.content.get("id") or message.id)
            if message.created_at < stale or await self._r.exists(
                f"{self._p}kv:{_DONE_MARK}{write_id}"
            ):
                continue
            created = message.created_at
            entry = OutboxEntry(
                id=write_id, created_at=created, write=message.content, next_try_at=created
            )
            entries.append(
                [write_id, codec.dumps(entry), codec.score(created), created.isoformat()]
            )
        moved = await self._r.register_script(_MOVE_OUTBOX)(
            keys=[key, f"{self._p}thread:{_OUTBOX_THREAD}"],
            args=[self._p, len(docs), json.dumps(entries, separators=(",", ":"))],
        )
        return int(moved) == 1


def _card(event: AuditEvent) -> CardRecord | None:
    data = event.data
    if not event.run_id or not event.tool_call_id or not data.get("channel") or not data.get("ts"):
        return None
    parts = (event.thread_id or "").split(":")
    team = parts[1] if len(parts) == 4 and parts[0] == "slack" else "unknown"
    return CardRecord(
        run_id=event.run_id,
        tool_call_id=event.tool_call_id,
        team=str(data.get("team") or team),
        channel=str(data["channel"]),
        ts=str(data["ts"]),
        thread_ts=str(data.get("thread_ts") or data["ts"]),
        posted_at=event.at,
        shown={k: v for k, v in data.items() if k not in _WHERE},
    )
