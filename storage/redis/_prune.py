"""``RedisPrune``: ``RedisStorage.prune``, in batches that each run as one Lua script.

The rules are ``storage._prune``'s. Failed runs come from the ``snaps:all`` zset and old audit
events from ``audit:all`` (both read by score below the cutoff, in pages); the claims and
approvals hashes of ended runs are found with ``SCAN``, the cards of ended runs from the
``cards:posted`` zset. Python decides from the records it
read, then a script per batch deletes each one only if it is still as read and its run still
has no snapshot (or, for audit events, is not pending), and keeps every index in step. Keys
expire by themselves (``kv:`` has a PX expiry), so ``values`` is always 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis

from storage import _codec as codec
from storage._prune import PruneReport
from storage._records import ApprovalRecord, AuditEvent, ClaimRecord
from storage.redis._change import audit_indexes, member, opt
from storage.redis._grants import prune_grants
from storage.redis._scripts import _SNAPSHOTS

BATCH = 500
"""Records read, and deleted by one script call, at a time."""

_PRUNE_FAILED = (
    _SNAPSHOTS
    + """
-- ARGV: prefix, cutoff score, run ids. Deletes (as delete_snapshot) each run's snapshot that
-- is still not decidable, older than the cutoff, and has no claim still 'claimed'.
-- Returns {snapshots deleted, approvals deleted with them}.
local p, cutoff = ARGV[1], tonumber(ARGV[2])
local gone, approvals = 0, 0
for i = 3, #ARGV do
  local run = ARGV[i]
  local score = tonumber(redis.call('ZSCORE', p .. 'snaps:all', run))
  if redis.call('HGET', p .. 'snap:' .. run, 'decidable') == '0' and score and score < cutoff then
    local busy = false
    for _, doc in ipairs(redis.call('HVALS', p .. 'claims:' .. run)) do
      if cjson.decode(doc).status == 'claimed' then
        busy = true
        break
      end
    end
    if not busy then
      approvals = approvals + redis.call('HLEN', p .. 'approvals:' .. run)
      delete_snapshot(p, run)
      gone = gone + 1
    end
  end
end
return {gone, approvals}
"""
)

_PRUNE_ENDED = """
-- ARGV: prefix, JSON list of [kind ('claims' | 'approvals'), run, field, JSON read, member].
-- Deletes each field still holding the JSON read whose run has no snapshot; a claim also
-- leaves the unfinished and leases zsets. Returns {claims deleted, approvals deleted}.
local p = ARGV[1]
local counts = {claims = 0, approvals = 0}
for _, it in ipairs(cjson.decode(ARGV[2])) do
  local hash = p .. it[1] .. ':' .. it[2]
  local ended = redis.call('EXISTS', p .. 'snap:' .. it[2]) == 0
  if ended and redis.call('HGET', hash, it[3]) == it[4] then
    redis.call('HDEL', hash, it[3])
    if it[1] == 'claims' then
      redis.call('ZREM', p .. 'claims:unfinished', it[5])
      redis.call('ZREM', p .. 'claims:leases', it[5])
    end
    counts[it[1]] = counts[it[1]] + 1
  end
end
return {counts.claims, counts.approvals}
"""

_PRUNE_AUDIT = """
-- ARGV: prefix, JSON list of [seq, run ('' or '=' .. id), index zsets]. Deletes each event
-- unless its run is pending (has a snapshot not marked undecidable).
-- Returns {events deleted, events kept}.
local p = ARGV[1]
local gone, kept = 0, 0
for _, it in ipairs(cjson.decode(ARGV[2])) do
  local pending = false
  if it[2] ~= '' then
    local key = p .. 'snap:' .. string.sub(it[2], 2)
    pending = redis.call('EXISTS', key) == 1 and redis.call('HGET', key, 'decidable') ~= '0'
  end
  if pending then
    kept = kept + 1
  else
    gone = gone + redis.call('HDEL', p .. 'audit:events', it[1])
    for _, index in ipairs(it[3]) do
      redis.call('ZREM', index, it[1])
    end
  end
end
return {gone, kept}
"""


_PRUNE_CARDS = """
-- ARGV: prefix, cutoff score, members of cards:posted ([run, tool_call_id] JSON). Deletes each
-- card posted before the cutoff whose run has no snapshot. Returns the cards deleted.
local p, cutoff = ARGV[1], tonumber(ARGV[2])
local gone = 0
for i = 3, #ARGV do
  local score = tonumber(redis.call('ZSCORE', p .. 'cards:posted', ARGV[i]))
  local ids = cjson.decode(ARGV[i])
  if score and score < cutoff and redis.call('EXISTS', p .. 'snap:' .. ids[1]) == 0 then
    redis.call('HDEL', p .. 'card:' .. ids[1], ids[2])
    redis.call('ZREM', p .. 'cards:posted', ARGV[i])
    gone = gone + 1
  end
end
return gone
"""


class RedisPrune:
    """The retention half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str

    async def prune(self, *, before: datetime, audit: bool = False) -> PruneReport:
        cutoff = codec.score(before)
        snapshots, failed_approvals = await self._prune_failed_runs(cutoff)
        claims, approvals = await self._prune_ended_runs(before)
        cards = await self._prune_cards(cutoff)
        events = await self._prune_audit(cutoff) if audit else 0
        grants = await prune_grants(self._r, self._p, cutoff)
        return PruneReport(
            grants=grants,
            snapshots=snapshots,
            claims=claims,
            approvals=failed_approvals + approvals,
            cards=cards,
            audit_events=events,
        )

    async def _prune_failed_runs(self, cutoff: int) -> tuple[int, int]:
        script = self._r.register_script(_PRUNE_FAILED)
        kept = snapshots = approvals = 0
        while True:
            runs = await self._r.zrangebyscore(
                f"{self._p}snaps:all", "-inf", f"({cutoff}", start=kept, num=BATCH
            )
            if not runs:
                return snapshots, approvals
            gone, with_them = await script(args=[self._p, cutoff, *runs])
            snapshots, approvals = snapshots + int(gone), approvals + int(with_them)
            kept += len(runs) - int(gone)

    async def _prune_ended_runs(self, before: datetime) -> tuple[int, int]:
        script = self._r.register_script(_PRUNE_ENDED)
        claims = approvals = 0
        for kind in ("claims", "approvals"):
            async for keys in self._hashes(kind):
                found = await script(args=[self._p, await self._old_fields(kind, keys, before)])
                claims, approvals = claims + int(found[0]), approvals + int(found[1])
        return claims, approvals

    async def _prune_cards(self, cutoff: int) -> int:
        script = self._r.register_script(_PRUNE_CARDS)
        kept = cards = 0
        while True:
            members = await self._r.zrangebyscore(
                f"{self._p}cards:posted", "-inf", f"({cutoff}", start=kept, num=BATCH
            )
            if not members:
                return cards
            gone = int(await script(args=[self._p, cutoff, *members]))
            cards += gone
            kept += len(members) - gone

    async def _hashes(self, kind: str) -> AsyncIterator[list[str]]:
        """Batches of the ``claims:{run}`` (or ``approvals:{run}``) hash keys, by ``SCAN``."""
        zsets = {f"{self._p}claims:unfinished", f"{self._p}claims:leases"}
        batch: list[str] = []
        async for key in self._r.scan_iter(match=f"{_glob_escape(self._p)}{kind}:*", count=BATCH):
            if _text(key) not in zsets:
                batch.append(_text(key))
            if len(batch) >= BATCH:
                yield batch
                batch = []
        if batch:
            yield batch

    async def _old_fields(self, kind: str, keys: list[str], before: datetime) -> str:
        """The ``_PRUNE_ENDED`` payload: old fields of ``keys`` whose run has no snapshot."""
        runs = [key[len(f"{self._p}{kind}:") :] for key in keys]
        async with self._r.pipeline(transaction=False) as pipe:
            for run, key in zip(runs, keys, strict=True):
                pipe.exists(f"{self._p}snap:{run}")
                pipe.hgetall(key)
            replies = await pipe.execute()
        items: list[list[str]] = []
        for n, run in enumerate(runs):
            if int(replies[2 * n]):
                continue
            for field, doc in replies[2 * n + 1].items():
                if kind == "claims":
                    claim = codec.loads(ClaimRecord, doc)
                    ended = claim.completed_at or claim.decided_at
                    if claim.status == "completed" and ended < before:
                        items.append([kind, run, _text(field), _text(doc), member(run, claim.key)])
                elif codec.loads(ApprovalRecord, doc).approved_at < before:
                    items.append([kind, run, _text(field), _text(doc), ""])
        return json.dumps(items, separators=(",", ":"))

    async def _prune_audit(self, cutoff: int) -> int:
        script = self._r.register_script(_PRUNE_AUDIT)
        kept = events = 0
        while True:
            seqs = [
                _text(seq)
                for seq in await self._r.zrangebyscore(
                    f"{self._p}audit:all", "-inf", f"({cutoff}", start=kept, num=BATCH
                )
            ]
            if not seqs:
                return events
            docs = await self._r.hmget(f"{self._p}audit:events", seqs)
            items: list[list[Any]] = []
            for seq, doc in zip(seqs, docs, strict=True):
                if doc is None:  # an index entry without its event: drop it from the index
                    items.append([seq, "", [f"{self._p}audit:all"]])
                else:
                    event = codec.loads(AuditEvent, doc)
                    items.append([seq, opt(event.run_id), audit_indexes(self._p, event)])
            gone, pending = await script(args=[self._p, json.dumps(items, separators=(",", ":"))])
            events += int(gone)
            kept += int(pending)


def _glob_escape(text: str) -> str:
    """``text`` matched literally in a ``SCAN MATCH`` pattern."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
