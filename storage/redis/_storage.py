"""``RedisStorage``: the protocol on ``redis.asyncio`` (one Redis server, not Redis Cluster).

Layout under the key prefix (default ``countersign:``)::

    snap:{run_id}            hash: version, doc (JSON), indexed ids, decidable (1/0)
    snaps:all|agent:{id}|thread:{id}|resource:{id}
                             zsets of run ids, score = suspended_at (µs since epoch)
    snaps:decidable          zset of the decidable run ids, score = suspended_at
    snaps:due:{agent_id}     zset of runs with something due, score = due_at (``_due``)
    layout:decidable|due     set once the snapshots written before that index were indexed
    claims:{run_id}          hash: claim key → claim JSON (HSETNX makes a claim single-use)
    claims:unfinished        zset of [run_id, key] JSON still ``claimed``, score = decided_at
    claims:leases            zset of the same members, score = lease_until (0: no lease)
    approvals:{run_id}       hash: [key, approver] JSON → approval JSON (HSETNX: once each);
                             deleted with the run's snapshot
    thread:{thread_id}       thread JSON
    msgs:{thread_id}         list of message JSON, oldest first
    audit:seq, audit:events  counter, hash seq → event JSON
    audit:all|run:{id}|call:{id}|thread:{id}
                             zsets of seqs, score = at
    kv:{key}                 string with a PX expiry
    card:*, cards:posted, outbox:*  the edge's records (``storage.redis._edge``)
    escalations:{run_id}     hash: [key, step] JSON → step JSON (``_escalations``)
    tmp:{uuid}               short-lived intersections of several indexes

Multi-key writes are Lua scripts (``storage.redis._scripts``), hence atomic; ``commit`` is one
script call for a whole state change, and ``load_run`` one script call too. Claims, leases and
approvals live in ``storage.redis._claims``, ``prune`` in ``_prune``, the listings of snapshots
in ``_listing``.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis import exceptions as redis_errors

from storage import _codec as codec
from storage._change import StateChange
from storage._errors import SnapshotVersionConflict, StorageConfigError, StorageUnavailable
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
)
from storage.redis import _change as change_args
from storage.redis._claims import RedisClaims, sorted_approvals, sorted_claims
from storage.redis._due import DUE_METHODS, RedisDue
from storage.redis._edge import EDGE_METHODS, RedisEdge
from storage.redis._escalations import ESCALATION_METHODS, RedisEscalations
from storage.redis._grants import GRANT_METHODS, RedisGrants
from storage.redis._listing import LISTING_METHODS, RedisListing
from storage.redis._prune import RedisPrune
from storage.redis._scripts import (
    APPEND_AUDIT,
    BACKFILL_DECIDABLE,
    COMMIT,
    DELETE_SNAPSHOT,
    LOAD_RUN,
    SAVE_SNAPSHOT,
)

DEFAULT_KEY_PREFIX = "countersign:"
"""Prefix of every key ``RedisStorage`` writes."""

_PROTOCOL_METHODS = (
    "commit",
    "commit_batch",
    "load_run",
    "save_snapshot",
    "load_snapshot",
    "delete_snapshot",
    "claim",
    "complete_claim",
    "list_claims",
    "list_claims_of_runs",
    "list_unfinished_claims",
    "renew_lease",
    "take_over_expired_claims",
    "add_approval",
    "list_approvals",
    "save_thread",
    "get_thread",
    "append_messages",
    "list_messages",
    "append_audit",
    "query_audit",
    "add_if_absent",
    "get_value",
    "delete_value",
    "prune",
    *EDGE_METHODS,
    *ESCALATION_METHODS,
    *DUE_METHODS,
    *LISTING_METHODS,
    *GRANT_METHODS,
)
"""Every protocol method: each reports an unreachable server as ``StorageUnavailable``."""

_MESSAGE_CHUNK = 200


class RedisStorage(
    RedisClaims, RedisPrune, RedisEdge, RedisEscalations, RedisGrants, RedisDue, RedisListing
):
    """Storage in Redis; ``redis://host:6379/0`` (``rediss://`` for TLS) URLs.

    Give it a ``redis.asyncio.Redis`` you own (never closed here unless ``owns_client``), or use
    ``from_url``, whose client ``close`` releases. ``?key_prefix=...`` in the URL, or
    ``key_prefix=``, keeps several deployments (or tests) apart in one database.

    Example:
        >>> store = RedisStorage.from_url("redis://127.0.0.1:6379/0")
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        owns_client: bool = False,
        key_prefix: str = DEFAULT_KEY_PREFIX,
    ) -> None:
        super().__init__(client, key_prefix)
        self._owns_client = owns_client
        self._save_snapshot = client.register_script(SAVE_SNAPSHOT)
        self._delete_snapshot = client.register_script(DELETE_SNAPSHOT)
        self._append_audit = client.register_script(APPEND_AUDIT)
        self._commit = client.register_script(COMMIT)
        self._load_run = client.register_script(LOAD_RUN)
        self._backfill_decidable = client.register_script(BACKFILL_DECIDABLE)
        self._decidable_indexed = False

    @classmethod
    def from_url(cls, url: str, *, key_prefix: str | None = None) -> RedisStorage:
        """Connect to ``url``; the client is closed by ``close``.

        A ``key_prefix`` query parameter in the URL sets the key prefix unless the argument does.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "rediss", "unix"):
            raise StorageConfigError(
                f"RedisStorage needs a redis://, rediss:// or unix:// URL, not {parts.scheme}://"
            )
        query = parse_qsl(parts.query, keep_blank_values=True)
        prefixes = [value for name, value in query if name == "key_prefix"]
        query = [(name, value) for name, value in query if name != "key_prefix"]
        url = urlunsplit(parts._replace(query=urlencode(query)))
        prefix = key_prefix if key_prefix is not None else (prefixes or [DEFAULT_KEY_PREFIX])[-1]
        client = aioredis.Redis.from_url(url, decode_responses=True)
        return cls(client, owns_client=True, key_prefix=prefix)

    @property
    def where(self) -> str:
        """The server, for error messages (no password)."""
        kwargs = self._r.connection_pool.connection_kwargs
        return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"

    @property
    def key_prefix(self) -> str:
        """The prefix of every key this storage writes."""
        return self._p

    async def close(self) -> None:
        if self._owns_client:
            await self._r.aclose()

    # -- state changes ---------------------------------------------------------------------
    async def commit(self, change: StateChange) -> ClaimRecord | None:
        befores: list[str | None] | None = None  # first try: claims completed in the script
        while True:
            reply = await self._commit(
                args=[self._p, change_args.payload(self._p, change, befores)]
            )
            kind = _text(reply[0])
            if kind == "ok":
                return None
            if kind == "claimed":
                return codec.loads(ClaimRecord, reply[1])
            if kind in ("conflict", "missing", "fenced", "grant"):
                raise change_args.refusal(change, kind, reply)
            # "changed": a claim to complete is not as the script expects: read, then send
            # the completed claims computed here
            async with self._r.pipeline(transaction=False) as pipe:
                for done in change.completions:
                    pipe.hget(f"{self._p}claims:{done.run_id}", done.key)
                befores = [None if b is None else _text(b) for b in await pipe.execute()]

    async def load_run(
        self, run_id: str
    ) -> tuple[SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord]]:
        keys = [f"{self._p}{kind}:{run_id}" for kind in ("snap", "claims", "approvals")]
        doc, claims, approvals = await self._load_run(keys=keys)
        snapshot = None if doc is None else codec.loads(SnapshotRecord, doc)
        return snapshot, sorted_claims(claims), sorted_approvals(approvals)

    # -- snapshots -------------------------------------------------------------------------
    async def save_snapshot(self, record: SnapshotRecord) -> None:
        if record.version < 1:
            raise SnapshotVersionConflict(record.run_id, record.version - 1)
        args = json.dumps(change_args.snapshot_args(self._p, record), separators=(",", ":"))
        if int(await self._save_snapshot(args=[self._p, args])) != 1:
            raise SnapshotVersionConflict(record.run_id, record.version - 1)

    async def load_snapshot(self, run_id: str) -> SnapshotRecord | None:
        doc = await self._r.hget(f"{self._p}snap:{run_id}", "doc")
        return None if doc is None else codec.loads(SnapshotRecord, doc)

    async def delete_snapshot(self, run_id: str) -> None:
        await self._delete_snapshot(args=[self._p, run_id])

    # -- memory ----------------------------------------------------------------------------
    async def save_thread(self, record: ThreadRecord) -> None:
        await self._r.set(f"{self._p}thread:{record.thread_id}", codec.dumps(record))

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        doc = await self._r.get(f"{self._p}thread:{thread_id}")
        return None if doc is None else codec.loads(ThreadRecord, doc)

    async def append_messages(self, records: Sequence[MessageRecord]) -> None:
        if not records:
            return
        async with self._r.pipeline(transaction=True) as pipe:
            for record in records:
                pipe.rpush(f"{self._p}msgs:{record.thread_id}", codec.dumps(record))
            await pipe.execute()

    async def list_messages(
        self, thread_id: str, *, limit: int | None = None, exclude_run_id: str | None = None
    ) -> list[MessageRecord]:
        key = f"{self._p}msgs:{thread_id}"
        if limit is not None and limit <= 0:
            return []
        if exclude_run_id is None:
            docs = await self._r.lrange(key, 0 if limit is None else -limit, -1)
            return [codec.loads(MessageRecord, doc) for doc in docs]
        # Walk back from the end in chunks until ``limit`` messages survive the filter.
        newest_first: list[MessageRecord] = []
        high = int(await self._r.llen(key)) - 1
        while high >= 0 and (limit is None or len(newest_first) < limit):
            low = max(0, high - _MESSAGE_CHUNK + 1)
            chunk = await self._r.lrange(key, low, high)
            for doc in reversed(chunk):
                message = codec.loads(MessageRecord, doc)
                if message.run_id != exclude_run_id:
                    newest_first.append(message)
            high = low - 1
        kept = newest_first if limit is None else newest_first[:limit]
        return kept[::-1]

    # -- audit -----------------------------------------------------------------------------
    async def append_audit(self, event: AuditEvent) -> None:
        indexes = change_args.audit_indexes(self._p, event)
        await self._append_audit(
            keys=[f"{self._p}audit:seq", f"{self._p}audit:events", *indexes],
            args=[codec.dumps(event), codec.score(event.at)],
        )

    async def query_audit(
        self,
        *,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        thread_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[AuditEvent]:
        if limit is not None and limit <= 0:
            return []
        indexes = [
            f"{self._p}audit:{kind}:{value}"
            for kind, value in (("run", run_id), ("call", tool_call_id), ("thread", thread_id))
            if value is not None
        ]
        low = "-inf" if since is None else str(codec.score(since))
        high = "+inf" if until is None else f"({codec.score(until)}"
        async with self._r.pipeline(transaction=True) as pipe:
            source, queued = self._intersect(pipe, indexes, f"{self._p}audit:all")
            if limit is None:
                pipe.zrangebyscore(source, low, high)
            else:
                pipe.zrangebyscore(source, low, high, start=0, num=limit)
            if queued:
                pipe.delete(source)
            replies = await pipe.execute()
        seqs = replies[queued]
        if not seqs:
            return []
        docs = await self._r.hmget(f"{self._p}audit:events", seqs)
        return [codec.loads(AuditEvent, doc) for doc in docs if doc is not None]

    # -- key → value -----------------------------------------------------------------------
    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        if ttl_seconds <= 0:  # would expire at once: only report whether the key was free
            return await self.get_value(key) is None
        ttl_ms = max(1, math.ceil(ttl_seconds * 1000))
        return bool(await self._r.set(f"{self._p}kv:{key}", value, nx=True, px=ttl_ms))

    async def get_value(self, key: str) -> str | None:
        value = await self._r.get(f"{self._p}kv:{key}")
        return None if value is None else _text(value)

    async def delete_value(self, key: str) -> None:
        await self._r.delete(f"{self._p}kv:{key}")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _unavailable_when_unreachable(method: Any) -> Any:
    """Wrap a public method: Redis connection failures become ``StorageUnavailable``."""

    async def wrapper(self: RedisStorage, *args: Any, **kwargs: Any) -> Any:
        try:
            return await method(self, *args, **kwargs)
        except (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError) as exc:
            raise StorageUnavailable(self.where, exc) from exc

    return functools.update_wrapper(wrapper, method)


for _name in _PROTOCOL_METHODS:
    setattr(RedisStorage, _name, _unavailable_when_unreachable(getattr(RedisStorage, _name)))
