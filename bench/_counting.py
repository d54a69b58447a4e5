"""What one cycle asks of the database: SQL statements and transactions, Redis commands.

``open_counted(url)`` opens the storage at ``url`` through the public API with counters attached
at the driver edge, never inside ``storage``:

- ``SQLStorage`` on a SQLite file: the ``sqlite3`` trace callback of every connection the
  engine opens (SQLAlchemy's ``connect`` event), which sees each statement SQLite runs, whether
  it came through SQLAlchemy or straight from the driver (``storage.sql.sqlite._decision_path``):
  statements
  are all but ``COMMIT`` / ``ROLLBACK`` (our ``BEGIN`` / ``BEGIN IMMEDIATE`` included),
  transactions the ``BEGIN`` ones, commits the ``COMMIT`` ones.
- ``SQLStorage`` on PostgreSQL: the protocol messages each ``asyncpg`` connection of the engine
  writes (``bench._pg_wire``, attached by SQLAlchemy's ``connect`` event), which sees what
  SQLAlchemy sends and what ``storage.sql.postgres._decision_path`` runs on the driver alike:
  statements are all
  but ``COMMIT`` / ``ROLLBACK`` (``BEGIN`` and the pool's pings included), transactions the
  ``BEGIN`` ones plus each statement run outside one (autocommit), commits the ``COMMIT`` ones
  plus those autocommitted statements, round trips the waits for the server (``Sync`` or a
  simple query).
- ``RedisStorage`` on ``redis://``: a ``redis.asyncio`` connection class that counts the commands
  it packs and the writes it sends (one per command, one per pipeline: the round trips). Lua
  scripts count as one command each (``EVALSHA``).
- Anything else (``memory://``): no counters.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from bench._floor import split_key_prefix
from bench._pg_wire import Sent, WireTap, verb
from storage import RedisStorage, SQLStorage, Storage, create_storage

REDIS_DEFAULT_KEY_PREFIX = "countersign:"
"""``RedisStorage``'s prefix when the URL names none."""


@dataclasses.dataclass
class Counts:
    """Running totals of one storage's traffic; ``names`` says which ones it counts."""

    names: tuple[str, ...]
    totals: dict[str, int] = dataclasses.field(default_factory=dict)

    def add(self, name: str, n: int = 1) -> None:
        self.totals[name] = self.totals.get(name, 0) + n

    def snapshot(self) -> dict[str, int]:
        return {name: self.totals.get(name, 0) for name in self.names}


SQL_COUNTS = ("statements", "transactions", "commits")
POSTGRES_COUNTS = (*SQL_COUNTS, "round_trips")
REDIS_COUNTS = ("redis_commands", "redis_round_trips")


def open_counted(url: str, *, durable_claims: bool = True) -> tuple[Storage, Counts | None]:
    """``create_storage(url)`` with traffic counters where the backend has a cheap hook."""
    if urlsplit(url).scheme == "redis":
        return _counted_redis(url)
    store = create_storage(url, durable_claims=durable_claims)
    if not isinstance(store, SQLStorage):
        return store, None
    if store.engine.dialect.name != "sqlite":
        return store, _counted_postgres(store)
    from sqlalchemy import event

    counts = Counts(SQL_COUNTS)
    event.listen(store.engine.sync_engine, "connect", lambda conn, _: _trace_sqlite(conn, counts))
    return store, counts


def _counted_postgres(store: SQLStorage) -> Counts:
    from sqlalchemy import event

    counts = Counts(POSTGRES_COUNTS)

    def on_statement(sent: Sent) -> None:
        first = verb(sent.sql)
        if first in ("COMMIT", "END"):
            counts.add("commits")
        elif first in ("ROLLBACK", "ABORT"):
            counts.add("rollbacks")
        else:
            counts.add("statements")
            if first in ("BEGIN", "START") or not sent.in_transaction:
                counts.add("transactions")
            if not sent.in_transaction:
                counts.add("commits")

    tap = WireTap(on_statement=on_statement, on_round_trip=lambda: counts.add("round_trips"))
    event.listen(
        store.engine.sync_engine, "connect", lambda conn, _: tap.attach(conn.driver_connection)
    )
    return counts


def _counted_redis(url: str) -> tuple[Storage, Counts]:
    import redis.asyncio as aioredis

    counts = Counts(REDIS_COUNTS)

    class CountingConnection(aioredis.Connection):
        def pack_command(self, *args: Any) -> list[bytes]:
            counts.add("redis_commands")
            return super().pack_command(*args)

        async def send_packed_command(
            self, command: bytes | str | Iterable[bytes], check_health: bool = True
        ) -> None:
            counts.add("redis_round_trips")
            await super().send_packed_command(command, check_health)

    server, prefix = split_key_prefix(url)
    client = aioredis.Redis.from_url(
        server, decode_responses=True, connection_class=CountingConnection
    )
    prefix = REDIS_DEFAULT_KEY_PREFIX if prefix is None else prefix
    return RedisStorage(client, owns_client=True, key_prefix=prefix), counts


def _trace_sqlite(dbapi_connection: Any, counts: Counts) -> None:
    """Count what SQLite runs on this (SQLAlchemy-wrapped) connection of the engine."""
    # A file's connections run in the loop's thread and show their sqlite3 connection;
    # a :memory: database on aiosqlite's own thread is not counted.
    connection = getattr(dbapi_connection.driver_connection, "sqlite3_connection", None)
    if not isinstance(connection, sqlite3.Connection):
        return

    def on_statement(sql: str) -> None:
        verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if verb in ("COMMIT", "ROLLBACK", "END"):
            counts.add("commits" if verb != "ROLLBACK" else "rollbacks")
            return
        counts.add("statements")
        if verb == "BEGIN":
            counts.add("transactions")

    connection.set_trace_callback(on_statement)
