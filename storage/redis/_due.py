"""``RedisStorage``'s due index: ``snaps:due:{agent_id}``, a zset per agent of its decidable
run ids scored by ``due_at`` (µs since the epoch), written and removed by the same script that
writes or deletes the snapshot (``write_snapshot`` / ``unindex`` in ``storage.redis._scripts``).

``list_due`` is one script: from the key ``after`` on, by rank (the run the last page ended on,
still at its score) or by score (it moved or went), members and their documents read together,
so a page never mixes two states of a run. ``reschedule`` checks the version and rewrites the
document and the zset in one script. Never an offset over the index, never a count.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import datetime

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._records import DueKey, SnapshotRecord
from storage.redis._lua import DOCS_OF_RUNS

DUE_METHODS = ("list_due", "reschedule")
"""The protocol methods of this half (each wrapped like the others for ``StorageUnavailable``)."""

_LIST_DUE = (
    """
-- KEYS: the agent's due zset. ARGV: prefix, until score, after score ('' from the start),
-- after run, limit. Returns the documents of the due runs after the key, by (score, member).
local key, p, upto, limit = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[5])
local runs = {}
if ARGV[3] == '' then
  runs = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[2], 'LIMIT', 0, limit)
else
  local at = redis.call('ZSCORE', key, ARGV[4])
  if at and tonumber(at) == tonumber(ARGV[3]) then
    -- the last page's run is still where it was: the next ones by rank
    local rank = redis.call('ZRANK', key, ARGV[4])
    local found = redis.call('ZRANGE', key, rank + 1, rank + limit, 'WITHSCORES')
    for i = 1, #found, 2 do
      if tonumber(found[i + 1]) > upto then break end
      runs[#runs + 1] = found[i]
    end
  else
    -- it moved or went: the others at its score after it (members order ties), then past it
    local ties = redis.call('ZRANGEBYSCORE', key, ARGV[3], ARGV[3])
    for i = 1, #ties do
      if #runs < limit and ties[i] > ARGV[4] then runs[#runs + 1] = ties[i] end
    end
    if #runs < limit and tonumber(ARGV[3]) < upto then
      local rest = redis.call('ZRANGEBYSCORE', key, '(' .. ARGV[3], ARGV[2],
                              'LIMIT', 0, limit - #runs)
      for i = 1, #rest do runs[#runs + 1] = rest[i] end
    end
  end
end
"""
    + DOCS_OF_RUNS
)

_RESCHEDULE = """
-- KEYS: the snapshot hash, the agent's due zset. ARGV: run, expected version, new document,
-- due score ('' for none). 1 when rewritten; 0 when gone, saved again, or not decidable.
local cur = redis.call('HMGET', KEYS[1], 'version', 'decidable')
if not cur[1] or tonumber(cur[1]) ~= tonumber(ARGV[2]) or cur[2] == '0' then
  return 0
end
redis.call('HSET', KEYS[1], 'doc', ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
end
return 1
"""

_BACKFILL_DUE = """
-- ARGV: prefix. Once per key prefix: the decidable snapshots written before the due index
-- existed are due at once (score = suspended_at); the next sweep gives each its due moment.
local p = ARGV[1]
if redis.call('GET', p .. 'layout:due') then
  return 0
end
local runs = redis.call('ZRANGE', p .. 'snaps:decidable', 0, -1, 'WITHSCORES')
for i = 1, #runs, 2 do
  local doc = redis.call('HGET', p .. 'snap:' .. runs[i], 'doc')
  if doc and not string.find(doc, '"due_at"', 1, true) then
    local agent = redis.call('HGET', p .. 'snap:' .. runs[i], 'agent')
    redis.call('ZADD', p .. 'snaps:due:' .. agent, runs[i + 1], runs[i])
  end
end
redis.call('SET', p .. 'layout:due', '1')
return 1
"""


class RedisDue:
    """The due half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str
    _backfill_decidable: AsyncScript
    _decidable_indexed: bool

    _due_indexed = False
    """Whether ``_BACKFILL_DUE`` ran on this prefix (set by the first ``list_due``)."""

    @functools.cached_property
    def _list_due_script(self) -> AsyncScript:
        return self._r.register_script(_LIST_DUE)

    @functools.cached_property
    def _reschedule_script(self) -> AsyncScript:
        return self._r.register_script(_RESCHEDULE)

    @functools.cached_property
    def _backfill_due_script(self) -> AsyncScript:
        return self._r.register_script(_BACKFILL_DUE)

    async def list_due(
        self,
        *,
        agent_id: str,
        until: datetime,
        after: DueKey | None = None,
        limit: int = 100,
    ) -> list[SnapshotRecord]:
        if limit <= 0:
            return []
        if not self._due_indexed:
            if not self._decidable_indexed:
                await self._backfill_decidable(args=[self._p])
                self._decidable_indexed = True
            await self._backfill_due_script(args=[self._p])
            self._due_indexed = True
        docs = await self._list_due_script(
            keys=[f"{self._p}snaps:due:{agent_id}"],
            args=[
                self._p,
                str(codec.score(until)),
                "" if after is None else str(codec.score(after[0])),
                "" if after is None else after[1],
                str(limit),
            ],
        )
        return [codec.loads(SnapshotRecord, doc) for doc in docs if doc]

    async def reschedule(self, run_id: str, *, version: int, due_at: datetime | None) -> bool:
        key = f"{self._p}snap:{run_id}"
        doc = await self._r.hget(key, "doc")
        if doc is None:
            return False
        stored = codec.loads(SnapshotRecord, doc)
        if stored.version != version or not stored.decidable:
            return False
        moved = dataclasses.replace(stored, due_at=due_at)
        done = await self._reschedule_script(
            keys=[key, f"{self._p}snaps:due:{stored.agent_id}"],
            args=[
                run_id,
                str(version),
                json.dumps(codec.document(moved), separators=(",", ":")),
                "" if due_at is None else str(codec.score(due_at)),
            ],
        )
        return int(done) == 1
