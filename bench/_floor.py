"""The raw-store floor of each storage backend, for ``bench cycle`` (see ``_peer_timing``).

The same work as the peers' floor, on the backend a storage URL names, with the driver family
that backend uses and no framework: ``memory://`` a dict, a SQLite file the standard ``sqlite3``
module (the code the peers run, on ``<file>-floor.db``), PostgreSQL one table through ``asyncpg``
in autocommit (one transaction per statement, in the URL's ``?schema=``), Redis ``SET`` / ``GET``
/ ``DEL`` through ``redis.asyncio`` under the URL's ``?key_prefix=`` (then ``floor:``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bench.peers._peer_timing import RawStore, open_raw_store


async def open_floor(url: str) -> RawStore:
    """The raw store under the storage at ``url``."""
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        return open_raw_store("memory", "")
    if scheme == "sqlite+aiosqlite":
        from sqlalchemy.engine import make_url

        return open_raw_store("sqlite", make_url(url).database or "bench.db")
    if scheme == "postgresql+asyncpg":
        return await PostgresRawStore.open(url)
    if scheme in ("redis", "rediss"):
        return RedisRawStore(url)
    raise ValueError(f"no raw-store floor for {scheme}:// URLs")


def split_key_prefix(url: str) -> tuple[str, str | None]:
    """A Redis URL without its ``?key_prefix=`` (as ``RedisStorage.from_url`` reads it), and it."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    prefixes = [value for name, value in query if name == "key_prefix"]
    rest = urlencode([(name, value) for name, value in query if name != "key_prefix"])
    return urlunsplit(parts._replace(query=rest)), (prefixes[-1] if prefixes else None)


class PostgresRawStore:
    """One table through ``asyncpg``, autocommit: each statement is its own transaction."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @classmethod
    async def open(cls, url: str) -> PostgresRawStore:
        import asyncpg
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
        schema = parsed.query.get("schema")
        dsn = parsed.set(drivername="postgresql").difference_update_query(["schema"])
        conn = await asyncpg.connect(dsn.render_as_string(hide_password=False))
        if isinstance(schema, str):
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            await conn.execute(f'SET search_path TO "{schema}"')
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_floor_rows"
            " (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        await conn.execute("DELETE FROM bench_floor_rows")  # what an interrupted run left
        return cls(conn)

    async def write(self, key: str, value: str) -> None:
        await self._conn.execute("INSERT INTO bench_floor_rows VALUES ($1, $2)", key, value)

    async def read(self, key: str) -> str:
        value = await self._conn.fetchval("SELECT value FROM bench_floor_rows WHERE key = $1", key)
        if value is None:
            raise KeyError(key)
        return str(value)

    async def delete(self, key: str) -> None:
        await self._conn.execute("DELETE FROM bench_floor_rows WHERE key = $1", key)

    async def close(self) -> None:
        await self._conn.close()


class RedisRawStore:
    """``SET`` / ``GET`` / ``DEL`` of one string key: one command and one round trip each."""

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        server, prefix = split_key_prefix(url)
        self._prefix = (prefix or "") + "floor:"
        self._client = aioredis.Redis.from_url(server, decode_responses=True)

    async def write(self, key: str, value: str) -> None:
        await self._client.set(self._prefix + key, value)

    async def read(self, key: str) -> str:
        value = await self._client.get(self._prefix + key)
        if value is None:
            raise KeyError(key)
        return str(value)

    async def delete(self, key: str) -> None:
        await self._client.delete(self._prefix + key)

    async def close(self) -> None:
        await self._client.aclose()
