"""``RedisGrants``: ``RedisStorage``'s standing grants, in a key space of their own.

Layout under the key prefix::

    grant:{grant_id}            hash: doc (the grant JSON as created), uses, max_uses, expires
                                (score of expires_at), created (score of created_at), revoked
                                ("" or revoked_at ISO 8601), revoked_by, indexes and live (JSON
                                lists of the index keys below that hold it)
    grants                      zset of every grant id, score = created_at (listing order)
    grants:agent:{agent_id}     ... of an agent's grants (score created_at)
    grants:by:{user}            ... of a person's grants (score created_at)
    grants:thread:{thread_id}   ... of the grants made in a thread (score created_at)
    grants:resource:{id}        ... of the grants made with that resource (score created_at)
    grants:live                 zset of the grants neither revoked nor used up, score =
                                expires_at (usable now: score above now)
    grants:live:agent:{agent}   ... of an agent
    grants:live:by:{user}       ... of a person (the Home tab's "Your active grants")
    grants:scope:[agent, tool, "thread" | "resource", id]
                                ... of one tool of an agent in one scope: a thread's grants, or
                                a resource's grants made outside any thread. Matching a gated
                                call reads the thread's and the resource's scope only.
    grants:ended                zset of the grants revoked or used up, score = when they ended
                                for ``prune``: the earliest of expires_at, revoked_at and (used
                                up) created_at
    layout:grants               "1" once the grants written before these indexes are indexed

A grant is created, and each use counted, by the ``COMMIT`` script that takes the approval's claim
(``storage.redis._scripts``, its Lua in ``storage.redis._grant_script``): each use is checked (not
revoked, before ``expires``, fewer than ``max_uses``) before anything is written, so the use past
``max_uses`` writes nothing; the use that takes the last one moves the grant from its ``live`` zsets
to ``grants:ended`` in the same script. Revoking is one script that sets ``revoked`` unless it is
set, and moves it too.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._change import StateChange
from storage._grants import listed, newest_first
from storage._records import GrantRecord

GRANT_METHODS = ("get_grant", "list_grants", "count_grants", "revoke_grant")
"""The protocol methods of this half (wrapped like the others for ``StorageUnavailable``)."""

ENDED = """
-- ended(p, id, key, score): move grant ``id`` (hash ``key``) from its live zsets to
-- grants:ended at ``score`` (kept lower when it is there already).
local function ended(p, id, key, score)
  local live = redis.call('HGET', key, 'live')
  if live and live ~= '' then
    for _, index in ipairs(cjson.decode(live)) do
      redis.call('ZREM', index, id)
    end
  end
  redis.call('ZADD', p .. 'grants:ended', 'LT', score, id)
end
"""

_REVOKE = (
    ENDED
    + """
-- KEYS[1] the grant hash. ARGV: prefix, grant id, revoked_at ISO 8601, revoked_by ('' for
-- None), revoked_at score.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local was = redis.call('HGET', KEYS[1], 'revoked')
if not was or was == '' then
  redis.call('HSET', KEYS[1], 'revoked', ARGV[3], 'revoked_by', ARGV[4])
  local expires = tonumber(redis.call('HGET', KEYS[1], 'expires'))
  ended(ARGV[1], ARGV[2], KEYS[1], math.min(expires, tonumber(ARGV[5])))
end
return 1
"""
)

_PRUNE = """
-- ARGV: prefix, cutoff score, grant ids. Deletes each grant that expired, or ended (revoked,
-- used up), before the cutoff, with every index entry. Returns the grants deleted.
local p, cutoff = ARGV[1], tonumber(ARGV[2])
local gone = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local key = p .. 'grant:' .. id
  local g = redis.call('HMGET', key, 'expires', 'indexes', 'live')
  local ended = tonumber(redis.call('ZSCORE', p .. 'grants:ended', id))
  if g[1] and (tonumber(g[1]) < cutoff or (ended and ended < cutoff)) then
    for _, field in ipairs({g[2], g[3]}) do
      if field and field ~= '' then
        for _, index in ipairs(cjson.decode(field)) do
          redis.call('ZREM', index, id)
        end
      end
    end
    redis.call('ZREM', p .. 'grants', id)
    redis.call('ZREM', p .. 'grants:ended', id)
    redis.call('DEL', key)
    gone = gone + 1
  elseif not g[1] then  -- an index entry without its grant
    redis.call('ZREM', p .. 'grants:live', id)
    redis.call('ZREM', p .. 'grants:ended', id)
  end
end
return gone
"""

_INDEX_OLD = """
-- ARGV: prefix, JSON list of [id, indexes, live, created, expires, ended ('' or score)]: index
-- each grant written before the indexes existed (its hash has no 'indexes' field), then mark
-- the layout done when ARGV[3] is '1'.
local p = ARGV[1]
for _, it in ipairs(cjson.decode(ARGV[2])) do
  local key = p .. 'grant:' .. it[1]
  if redis.call('EXISTS', key) == 1 and not redis.call('HGET', key, 'indexes') then
    for _, index in ipairs(it[2]) do
      redis.call('ZADD', index, it[4], it[1])
    end
    if it[6] == '' then
      for _, index in ipairs(it[3]) do
        redis.call('ZADD', index, it[5], it[1])
      end
    else
      redis.call('ZADD', p .. 'grants:ended', it[6], it[1])
    end
    redis.call('HSET', key, 'indexes', cjson.encode(it[2]), 'live', cjson.encode(it[3]),
      'created', it[4])
  end
end
if ARGV[3] == '1' then
  redis.call('SET', p .. 'layout:grants', '1')
end
return 1
"""

_FIELDS = ("doc", "uses", "revoked", "revoked_by")
_BATCH = 500


def scope_key(prefix: str, agent_id: str, tool_name: str, kind: str, scope_id: str) -> str:
    """The ``grants:scope:`` zset of one tool of an agent in a thread or a resource."""
    return f"{prefix}grants:scope:" + json.dumps(
        [agent_id, tool_name, kind, scope_id], separators=(",", ":")
    )


def indexes(prefix: str, g: GrantRecord) -> tuple[list[str], list[str]]:
    """The zsets that hold ``g``: every listing index (score created_at), and the live ones
    (score expires_at) it is in while it is neither revoked nor used up."""
    listing = [f"{prefix}grants:agent:{g.agent_id}", f"{prefix}grants:by:{g.granted_by}"]
    live = [
        f"{prefix}grants:live",
        f"{prefix}grants:live:agent:{g.agent_id}",
        f"{prefix}grants:live:by:{g.granted_by}",
    ]
    if g.thread_id is not None:
        listing.append(f"{prefix}grants:thread:{g.thread_id}")
        live.append(scope_key(prefix, g.agent_id, g.tool_name, "thread", g.thread_id))
    if g.resource_id is not None:
        listing.append(f"{prefix}grants:resource:{g.resource_id}")
        if g.thread_id is None:
            live.append(scope_key(prefix, g.agent_id, g.tool_name, "resource", g.resource_id))
    return listing, live


def ended_score(g: GrantRecord) -> int | None:
    """When ``g`` ended for ``prune`` (``grants:ended``), or None while it is live."""
    ends = []
    if g.revoked_at is not None:
        ends.append(codec.score(g.revoked_at))
    if g.uses >= g.max_uses:
        ends.append(codec.score(g.created_at))
    return None if not ends else min(codec.score(g.expires_at), *ends)


def grant_args(prefix: str, change: StateChange) -> dict[str, Any]:
    """What ``COMMIT`` needs of ``change``'s grant and grant uses (nothing when it has none)."""
    doc: dict[str, Any] = {}
    if (g := change.grant) is not None:
        listing, live = indexes(prefix, g)
        end = ended_score(g)
        doc["grant"] = {
            "key": f"{prefix}grant:{g.grant_id}",
            "id": g.grant_id,
            "doc": codec.dumps(g),
            "uses": str(g.uses),
            "max_uses": str(g.max_uses),
            "expires": str(codec.score(g.expires_at)),
            "revoked": "" if g.revoked_at is None else codec.stamp(g.revoked_at).isoformat(),
            "score": str(codec.score(g.created_at)),
            "indexes": listing,
            "live": live,
            "ended": "" if end is None else str(end),
        }
    if change.grant_uses:
        doc["grant_uses"] = [
            {
                "key": f"{prefix}grant:{use.grant_id}",
                "id": use.grant_id,
                "at": str(codec.score(use.at)),
            }
            for use in change.grant_uses
        ]
    return doc


class RedisGrants:
    """The grant half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str
    _grants_indexed: bool = False

    @functools.cached_property
    def _revoke_script(self) -> AsyncScript:
        return self._r.register_script(_REVOKE)

    async def get_grant(self, grant_id: str) -> GrantRecord | None:
        values = await self._r.hmget(f"{self._p}grant:{grant_id}", _FIELDS)
        return _record(values)

    async def list_grants(
        self,
        *,
        agent_id: str | None = None,
        tool_name: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
        active_at: datetime | None = None,
    ) -> list[GrantRecord]:
        await self._index_old_grants()
        keys, live = self._zsets(agent_id, tool_name, thread_id, resource_id, granted_by, active_at)
        async with self._r.pipeline(transaction=False) as pipe:
            for key in keys:
                if live and active_at is not None:  # by expiry: only those not expired yet
                    pipe.zrangebyscore(key, f"({codec.score(active_at)}", "+inf")
                else:
                    pipe.zrange(key, 0, -1)
            found = await pipe.execute()
        ids = sorted({_text(i) for ids in found for i in ids})
        async with self._r.pipeline(transaction=False) as pipe:
            for grant_id in ids:
                pipe.hmget(f"{self._p}grant:{grant_id}", _FIELDS)
            rows = await pipe.execute()
        return newest_first(
            [
                g
                for g in map(_record, rows)
                if g is not None
                and listed(
                    g,
                    agent_id=agent_id,
                    tool_name=tool_name,
                    thread_id=thread_id,
                    resource_id=resource_id,
                    granted_by=granted_by,
                    active_at=active_at,
                )
            ]
        )

    async def count_grants(
        self, *, agent_id: str | None = None, active_at: datetime | None = None
    ) -> int:
        await self._index_old_grants()
        if active_at is None:
            key = f"{self._p}grants" if agent_id is None else f"{self._p}grants:agent:{agent_id}"
            return int(await self._r.zcard(key))
        key = f"{self._p}grants:live" + ("" if agent_id is None else f":agent:{agent_id}")
        return int(await self._r.zcount(key, f"({codec.score(active_at)}", "+inf"))

    async def revoke_grant(
        self, grant_id: str, *, revoked_by: str | None, at: datetime
    ) -> GrantRecord | None:
        await self._index_old_grants()
        key = f"{self._p}grant:{grant_id}"
        args: list[str | int] = [
            self._p,
            grant_id,
            codec.stamp(at).isoformat(),
            revoked_by or "",
            codec.score(at),
        ]
        await self._revoke_script(keys=[key], args=args)
        return await self.get_grant(grant_id)

    def _zsets(
        self,
        agent_id: str | None,
        tool_name: str | None,
        thread_id: str | None,
        resource_id: str | None,
        granted_by: str | None,
        active_at: datetime | None,
    ) -> tuple[list[str], bool]:
        """The fewest zsets that hold every grant a listing may return, and whether they are
        live ones (scored by expiry; only for a listing of those usable at ``active_at``)."""
        p, active = self._p, active_at is not None
        if active and agent_id is not None and tool_name is not None and thread_id is not None:
            keys = [scope_key(p, agent_id, tool_name, "thread", thread_id)]  # a gated call
            if resource_id is not None:
                keys.append(scope_key(p, agent_id, tool_name, "resource", resource_id))
            return keys, True
        if thread_id is not None or resource_id is not None:
            keys = [f"{p}grants:thread:{thread_id}"] if thread_id is not None else []
            if resource_id is not None:
                keys.append(f"{p}grants:resource:{resource_id}")
            return keys, False
        if granted_by is not None:
            return [
                f"{p}grants:live:by:{granted_by}" if active else f"{p}grants:by:{granted_by}"
            ], active
        if agent_id is not None:
            return [
                f"{p}grants:live:agent:{agent_id}" if active else f"{p}grants:agent:{agent_id}"
            ], active
        return [f"{p}grants:live" if active else f"{p}grants"], active

    async def _index_old_grants(self) -> None:
        """Once per key prefix: index the grants written before these indexes existed."""
        if not self._grants_indexed:
            await index_old_grants(self._r, self._p)
            self._grants_indexed = True


async def prune_grants(r: aioredis.Redis, p: str, cutoff: int) -> int:
    """Delete the grants that expired or ended before ``cutoff`` (a score), in batches
    (``RedisStorage.prune``)."""
    await index_old_grants(r, p)
    script = r.register_script(_PRUNE)
    gone = 0
    for index in ("grants:live", "grants:ended"):
        while True:
            ids = await r.zrangebyscore(f"{p}{index}", "-inf", f"({cutoff}", start=0, num=_BATCH)
            if not ids:
                break
            gone += int(await script(args=[p, cutoff, *ids]))
    return gone


async def index_old_grants(r: aioredis.Redis, p: str) -> None:
    """Index the grants written before these indexes existed, unless ``layout:grants`` says
    that is done."""
    if await r.exists(f"{p}layout:grants"):
        return
    script = r.register_script(_INDEX_OLD)
    ids = [_text(i) for i in await r.zrange(f"{p}grants", 0, -1)]
    for start in range(0, len(ids) + 1, _BATCH):
        batch = ids[start : start + _BATCH]
        async with r.pipeline(transaction=False) as pipe:
            for grant_id in batch:
                pipe.hmget(f"{p}grant:{grant_id}", _FIELDS)
            rows = await pipe.execute()
        items = []
        for g in map(_record, rows):
            if g is not None:
                listing, live = indexes(p, g)
                end = ended_score(g)
                created, expires = codec.score(g.created_at), codec.score(g.expires_at)
                items.append(
                    [g.grant_id, listing, live, created, expires, "" if end is None else end]
                )
        last = "1" if start + _BATCH > len(ids) else "0"
        await script(args=[p, json.dumps(items, separators=(",", ":")), last])


def _record(values: list[Any]) -> GrantRecord | None:
    doc, uses, revoked, revoked_by = values
    if doc is None:
        return None
    record = codec.loads(GrantRecord, doc)
    return dataclasses.replace(
        record,
        uses=int(uses),
        revoked_at=None if not revoked else datetime.fromisoformat(revoked),
        revoked_by=revoked_by or None,
    )


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
