"""``RedisStorage``'s listings of snapshots, read off the ``snaps:*`` zsets (score =
``suspended_at``, µs since the epoch), newest first: a zset orders equal scores by member, so
``(suspended_at DESC, run_id DESC)`` as on every backend.

``list_snapshots`` reads the filters' zset (several intersected into a temporary key) at an
offset, with its count. ``page_snapshots`` is one script over ``snaps:agent:{agent_id}``: from
the key ``after`` on, by rank (the run the last page ended on, still at its score) or by score
(it went or moved: the others at its score that order after it, then those below it); members
and their documents read together, never an offset over the index, never a count.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._records import SnapshotKey, SnapshotRecord
from storage.redis._lua import DOCS_OF_RUNS

LISTING_METHODS = ("list_snapshots", "page_snapshots")
"""The protocol methods of this half (each wrapped like the others for ``StorageUnavailable``)."""

_TEMP_KEY_SECONDS = 30

_PAGE = (
    """
-- KEYS: the agent's zset. ARGV: prefix, after score ('' from the newest), after run, limit.
-- Returns the documents of the next runs after the key, by (score, member) descending.
local key, p, limit = KEYS[1], ARGV[1], tonumber(ARGV[4])
-- byte order, as the zset orders members (Lua's '<' follows the server's locale)
local function below(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local runs = {}
if ARGV[2] == '' then
  runs = redis.call('ZREVRANGE', key, 0, limit - 1)
else
  local at = redis.call('ZSCORE', key, ARGV[3])
  if at and tonumber(at) == tonumber(ARGV[2]) then
    -- the last page's run is still where it was: the next ones by rank
    local rank = redis.call('ZREVRANK', key, ARGV[3])
    runs = redis.call('ZREVRANGE', key, rank + 1, rank + limit)
  else
    -- it went or moved: the others at its score that order after it, then below its score
    local ties = redis.call('ZREVRANGEBYSCORE', key, ARGV[2], ARGV[2])
    for i = 1, #ties do
      if #runs < limit and below(ties[i], ARGV[3]) then runs[#runs + 1] = ties[i] end
    end
    if #runs < limit then
      local rest = redis.call('ZREVRANGEBYSCORE', key, '(' .. ARGV[2], '-inf',
                              'LIMIT', 0, limit - #runs)
      for i = 1, #rest do runs[#runs + 1] = rest[i] end
    end
  end
end
"""
    + DOCS_OF_RUNS
)


class RedisListing:
    """The listing half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str
    _backfill_decidable: AsyncScript
    _decidable_indexed: bool

    @functools.cached_property
    def _page_script(self) -> AsyncScript:
        return self._r.register_script(_PAGE)

    async def list_snapshots(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        decidable_only: bool = False,
    ) -> tuple[list[SnapshotRecord], int]:
        everything = f"{self._p}snaps:all"
        if decidable_only:
            everything = f"{self._p}snaps:decidable"
            if not self._decidable_indexed:
                await self._backfill_decidable(args=[self._p])
                self._decidable_indexed = True
        indexes = [
            f"{self._p}snaps:{kind}:{value}"
            for kind, value in (
                ("agent", agent_id),
                ("thread", thread_id),
                ("resource", resource_id),
            )
            if value is not None
        ]
        if indexes and decidable_only:
            indexes.append(everything)
        offset = max(offset, 0)
        stop = -1 if limit is None else offset + limit - 1
        async with self._r.pipeline(transaction=True) as pipe:
            source, queued = self._intersect(pipe, indexes, everything)
            pipe.zcard(source)
            pipe.zrevrange(source, offset, stop)
            if queued:
                pipe.delete(source)
            replies = await pipe.execute()
        total, run_ids = int(replies[queued]), replies[queued + 1]
        if limit is not None and limit <= 0:
            return [], total
        docs = await self._hget_many([f"{self._p}snap:{_text(run)}" for run in run_ids], "doc")
        return [codec.loads(SnapshotRecord, doc) for doc in docs if doc is not None], total

    async def page_snapshots(
        self, *, agent_id: str, after: SnapshotKey | None = None, limit: int = 100
    ) -> list[SnapshotRecord]:
        if limit <= 0:
            return []
        docs = await self._page_script(
            keys=[f"{self._p}snaps:agent:{agent_id}"],
            args=[
                self._p,
                "" if after is None else str(codec.score(after[0])),
                "" if after is None else after[1],
                str(limit),
            ],
        )
        return [codec.loads(SnapshotRecord, doc) for doc in docs if doc]

    def _intersect(self, pipe: Any, indexes: list[str], everything: str) -> tuple[str, int]:
        """The sorted set to read for ``indexes`` and how many commands that queued on ``pipe``.

        Several indexes are intersected into a temporary key (the caller deletes it when the
        count is not 0); one index is read as it is; none means ``everything``.
        """
        if not indexes:
            return everything, 0
        if len(indexes) == 1:
            return indexes[0], 0
        temp = f"{self._p}tmp:{uuid.uuid4().hex}"
        pipe.zinterstore(temp, indexes, aggregate="MAX")
        pipe.expire(temp, _TEMP_KEY_SECONDS)
        return temp, 2

    async def _hget_many(self, keys: list[str], field: str) -> list[Any]:
        if not keys:
            return []
        async with self._r.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hget(key, field)
            return list(await pipe.execute())


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value
