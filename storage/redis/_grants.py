"""``RedisGrants``: ``RedisStorage``'s standing grants, in a key space of their own.

Layout under the key prefix::

    grant:{grant_id}    hash: doc (the grant JSON as created), uses, max_uses, expires (score
                        of expires_at), revoked ("" or revoked_at ISO 8601), revoked_by
    grants              zset of grant ids, score = created_at (listing order)

A grant is created, and each use counted, by the ``COMMIT`` script that takes the approval's
claim (``storage.redis._scripts``): the use is checked (not revoked, before ``expires``, fewer
than ``max_uses``) before anything is written, so the use past ``max_uses`` writes nothing.
Revoking is one script that sets ``revoked`` unless it is set.
"""

from __future__ import annotations

import dataclasses
import functools
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._change import StateChange
from storage._grants import listed, newest_first
from storage._records import GrantRecord

GRANT_METHODS = ("get_grant", "list_grants", "revoke_grant")
"""The protocol methods of this half (wrapped like the others for ``StorageUnavailable``)."""

_REVOKE = """
-- KEYS[1] the grant hash. ARGV: revoked_at ISO 8601, revoked_by ('' for None).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local was = redis.call('HGET', KEYS[1], 'revoked')
if not was or was == '' then
  redis.call('HSET', KEYS[1], 'revoked', ARGV[1], 'revoked_by', ARGV[2])
end
return 1
"""

_FIELDS = ("doc", "uses", "revoked", "revoked_by")


def grant_args(prefix: str, change: StateChange) -> dict[str, Any]:
    """What ``COMMIT`` needs of ``change``'s grant and grant use (nothing when it has none)."""
    doc: dict[str, Any] = {}
    if (g := change.grant) is not None:
        doc["grant"] = {
            "key": f"{prefix}grant:{g.grant_id}",
            "id": g.grant_id,
            "doc": codec.dumps(g),
            "uses": str(g.uses),
            "max_uses": str(g.max_uses),
            "expires": str(codec.score(g.expires_at)),
            "revoked": "" if g.revoked_at is None else codec.stamp(g.revoked_at).isoformat(),
            "score": str(codec.score(g.created_at)),
        }
    if (use := change.grant_use) is not None:
        doc["grant_use"] = {
            "key": f"{prefix}grant:{use.grant_id}",
            "at": str(codec.score(use.at)),
        }
    return doc


class RedisGrants:
    """The grant half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str

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
        ids = [_text(i) for i in await self._r.zrange(f"{self._p}grants", 0, -1)]
        async with self._r.pipeline(transaction=False) as pipe:
            for grant_id in ids:
                pipe.hmget(f"{self._p}grant:{grant_id}", _FIELDS)
            rows = await pipe.execute()
        found = [g for g in map(_record, rows) if g is not None]
        return newest_first(
            [
                g
                for g in found
                if listed(
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

    async def revoke_grant(
        self, grant_id: str, *, revoked_by: str | None, at: datetime
    ) -> GrantRecord | None:
        key = f"{self._p}grant:{grant_id}"
        await self._revoke_script(keys=[key], args=[codec.stamp(at).isoformat(), revoked_by or ""])
        return await self.get_grant(grant_id)


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
