"""``RedisStorage``: the protocol on ``redis.asyncio`` (one Redis server, not Redis Cluster).

Layout under the key prefix (default ``countersign:``)::

    snap:{run_id}            hash: version, doc (JSON), indexed ids
    snaps:all|agent:{id}|thread:{id}|resource:{id}
                             zsets of run ids, score = suspended_at (µs since epoch)
    claims:{run_id}          hash: claim key → claim JSON (HSETNX makes a claim single-use)
    claims:unfinished        zset of [run_id, key] JSON still ``claimed``, score = decided_at
    thread:{thread_id}       thread JSON
    msgs:{thread_id}         list of message JSON, oldest first
    audit:seq, audit:events  counter, hash seq → event JSON
    audit:all|run:{id}|call:{id}|thread:{id}
                             zsets of seqs, score = at
    kv:{key}                 string with a PX expiry
    tmp:{uuid}               short-lived intersections of several indexes

Multi-key writes are Lua scripts (``storage._redis_scripts``), hence atomic.
"""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis

from storage import _redis_codec as codec
from storage._errors import SnapshotVersionConflict, StorageConfigError
from storage._records import (
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage._redis_scripts import (
    APPEND_AUDIT,
    CLAIM,
    COMPLETE_CLAIM,
    DELETE_SNAPSHOT,
    SAVE_SNAPSHOT,
)

DEFAULT_KEY_PREFIX = "countersign:"
"""Prefix of every key ``RedisStorage`` writes."""

_TEMP_KEY_SECONDS = 30
_MESSAGE_CHUNK = 200


class RedisStorage:
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
        self._r = client
        self._owns_client = owns_client
        self._p = key_prefix
        self._save_snapshot = client.register_script(SAVE_SNAPSHOT)
        self._delete_snapshot = client.register_script(DELETE_SNAPSHOT)
        self._claim = client.register_script(CLAIM)
        self._complete_claim = client.register_script(COMPLETE_CLAIM)
        self._append_audit = client.register_script(APPEND_AUDIT)

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
    def key_prefix(self) -> str:
        """The prefix of every key this storage writes."""
        return self._p

    async def close(self) -> None:
        if self._owns_client:
            await self._r.aclose()

    # -- snapshots -------------------------------------------------------------------------
    async def save_snapshot(self, record: SnapshotRecord) -> None:
        saved = await self._save_snapshot(
            keys=[f"{self._p}snap:{record.run_id}"],
            args=[
                self._p,
                record.run_id,
                record.version - 1,
                record.version,
                codec.dumps(record),
                record.agent_id,
                _opt(record.thread_id),
                _opt(record.resource_id),
                codec.score(record.suspended_at),
            ],
        )
        if record.version < 1 or int(saved) != 1:
            raise SnapshotVersionConflict(record.run_id, record.version - 1)

    async def load_snapshot(self, run_id: str) -> SnapshotRecord | None:
        doc = await self._r.hget(f"{self._p}snap:{run_id}", "doc")
        return None if doc is None else codec.loads(SnapshotRecord, doc)

    async def delete_snapshot(self, run_id: str) -> None:
        await self._delete_snapshot(keys=[f"{self._p}snap:{run_id}"], args=[self._p, run_id])

    async def list_snapshots(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> tuple[list[SnapshotRecord], int]:
        indexes = [
            f"{self._p}snaps:{kind}:{value}"
            for kind, value in (
                ("agent", agent_id),
                ("thread", thread_id),
                ("resource", resource_id),
            )
            if value is not None
        ]
        offset = max(offset, 0)
        stop = -1 if limit is None else offset + limit - 1
        async with self._r.pipeline(transaction=True) as pipe:
            source, queued = self._intersect(pipe, indexes, f"{self._p}snaps:all")
            pipe.zcard(source)
            pipe.zrevrange(source, offset, stop)
            if queued:
                pipe.delete(source)
            replies = await pipe.execute()
        total, run_ids = int(replies[queued]), replies[queued + 1]
        if limit is not None and limit <= 0:
            return [], total
        docs = await self._hget_many(
            [f"{self._p}snap:{_text(run_id)}" for run_id in run_ids], "doc"
        )
        return [codec.loads(SnapshotRecord, doc) for doc in docs if doc is not None], total

    # -- claims ----------------------------------------------------------------------------
    async def claim(self, record: ClaimRecord) -> ClaimRecord | None:
        existing = await self._claim(
            keys=[f"{self._p}claims:{record.run_id}", f"{self._p}claims:unfinished"],
            args=[
                record.key,
                codec.dumps(record),
                "1" if record.status == "claimed" else "0",
                codec.score(record.decided_at),
                _member(record.run_id, record.key),
            ],
        )
        return None if existing is None else codec.loads(ClaimRecord, existing)

    async def complete_claim(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        claims_key = f"{self._p}claims:{run_id}"
        while True:
            before = await self._r.hget(claims_key, key)
            if before is None:
                break
            done = dataclasses.replace(
                codec.loads(ClaimRecord, before),
                status="completed",
                outcome=dict(outcome),
                completed_at=utcnow(),
            )
            swapped = await self._complete_claim(
                keys=[claims_key, f"{self._p}claims:unfinished"],
                args=[key, before, codec.dumps(done), _member(run_id, key)],
            )
            if int(swapped) == 1:
                return
            if int(swapped) == -1:
                break
        raise KeyError(
            f"no claim {key!r} on run {run_id!r} to complete: claim() it before completing it"
        )

    async def list_claims(self, run_id: str) -> list[ClaimRecord]:
        docs = await self._r.hvals(f"{self._p}claims:{run_id}")
        found = [codec.loads(ClaimRecord, doc) for doc in docs]
        return sorted(found, key=lambda c: (c.decided_at, c.key))

    async def list_claims_of_runs(self, run_ids: Sequence[str]) -> dict[str, list[ClaimRecord]]:
        unique = list(dict.fromkeys(run_ids))
        async with self._r.pipeline(transaction=False) as pipe:
            for run_id in unique:
                pipe.hvals(f"{self._p}claims:{run_id}")
            results = await pipe.execute()
        return {
            run_id: sorted(
                (codec.loads(ClaimRecord, doc) for doc in docs), key=lambda c: (c.decided_at, c.key)
            )
            for run_id, docs in zip(unique, results, strict=True)
        }

    async def list_unfinished_claims(self, claimed_before: datetime) -> list[ClaimRecord]:
        members = await self._r.zrangebyscore(
            f"{self._p}claims:unfinished", "-inf", f"({codec.score(claimed_before)}"
        )
        async with self._r.pipeline(transaction=False) as pipe:
            for member in members:
                run_id, key = json.loads(_text(member))
                pipe.hget(f"{self._p}claims:{run_id}", key)
            docs = await pipe.execute()
        found = [codec.loads(ClaimRecord, doc) for doc in docs if doc is not None]
        return [c for c in found if c.status == "claimed"]

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
        indexes = [f"{self._p}audit:all"] + [
            f"{self._p}audit:{kind}:{value}"
            for kind, value in (
                ("run", event.run_id),
                ("call", event.tool_call_id),
                ("thread", event.thread_id),
            )
            if value is not None
        ]
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

    # -- helpers ---------------------------------------------------------------------------
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


def _opt(value: str | None) -> str:
    """An optional id as a script argument: ``""`` for None, ``"=" + id`` otherwise."""
    return "" if value is None else f"={value}"


def _member(run_id: str, key: str) -> str:
    """The unfinished-claims member naming one claim (JSON keeps any characters apart)."""
    return json.dumps([run_id, key], separators=(",", ":"))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else value
