"""Opening the async engine of ``SQLStorage``: URL checks, SQLite pragmas, PostgreSQL schema.

PostgreSQL connections are checked for a server-side close on checkout (no round trip).
SQLite gets WAL, a busy timeout and explicit ``BEGIN`` statements so that several processes can
share one file: writes run in ``BEGIN IMMEDIATE`` transactions (they queue for the write lock up
front instead of failing half-way), reads in plain deferred ones. A SQLite file is driven in the
event loop's thread (``storage.sql.sqlite._inline``) with a short busy timeout; waiting for another
process's lock is ``SQLDatabase``'s asynchronous retry.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, DisconnectionError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from storage._errors import StorageConfigError
from storage.sql.postgres._calls import never_sent
from storage.sql.sqlite._inline import BUSY_TIMEOUT_MS as INLINE_BUSY_TIMEOUT_MS
from storage.sql.sqlite._inline import inline_creator

WRITE_OPTION = "countersign_write"
"""Execution option marking a connection whose transaction will write (SQLite: BEGIN IMMEDIATE)."""
DURABLE_OPTION = "countersign_durable"
"""Execution option marking a write that must be on disk when it commits (SQLite: the
transaction runs with ``synchronous = FULL``, every other one with ``NORMAL``)."""
_SYNC_LEVEL = "countersign_synchronous"
"""Where a pooled connection remembers its current ``PRAGMA synchronous``."""

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite connection waits for another process's write lock before giving up."""

APPLICATION_NAME = "countersign"
"""``application_name`` of the PostgreSQL connections of an engine made from a URL."""

POSTGRES_POOL_SIZE = 10
"""Connections a PostgreSQL engine made from a URL keeps open, and never exceeds: callers
beyond it wait for one (a call holds it for about one round trip). SQLAlchemy's default
overflow connections are closed on return and reopened under load, which capped 100
concurrent approval cycles at ~200/s; pass an ``AsyncEngine`` for another pool."""

_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def parse_url(url: str | URL) -> tuple[URL, str | None]:
    """Check a storage URL; return it without our own ``schema`` option, and that option.

    ``postgresql+asyncpg://user@host/db?schema=NAME`` keeps countersign's tables in their own
    PostgreSQL schema (created on first use).
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StorageConfigError(
            "the SQL storage URL cannot be parsed: use sqlite+aiosqlite:///path.db or "
            "postgresql+asyncpg://user@host:5432/db"
        ) from exc
    if parsed.drivername not in _DRIVERS:
        raise StorageConfigError(
            f"SQLStorage needs an async driver, got {parsed.drivername!r}: write the URL as "
            "sqlite+aiosqlite:///path.db or postgresql+asyncpg://user@host:5432/db"
        )
    schema = parsed.query.get("schema")
    if isinstance(schema, tuple):
        schema = schema[-1]
    if schema is not None:
        if parsed.get_backend_name() != "postgresql":
            raise StorageConfigError(
                "the schema= URL option only applies to PostgreSQL: remove it from the SQLite URL"
            )
        if not _IDENTIFIER.match(schema):
            raise StorageConfigError(
                f"schema={schema!r} is not a plain SQL identifier: use letters, digits and _"
            )
        parsed = parsed.difference_update_query(["schema"])
    return parsed, schema


def create_engine(url: str | URL, *, inline: bool = True) -> tuple[AsyncEngine, str | None]:
    """An engine for ``url`` with our SQLite settings, and the PostgreSQL schema to use.

    ``inline=False``: a SQLite file through aiosqlite's worker thread with the long busy
    timeout (for migrations, which may wait for another process's).
    """
    parsed, schema = parse_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            database = str(Path(database).expanduser())
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        if inline and database and database != ":memory:" and not database.startswith("file:"):
            # A file: calls run in the loop's thread (see storage.sql.sqlite._inline).
            creator = inline_creator(database, uri=False)
            engine = create_async_engine(parsed, async_creator=creator)
            configure_sqlite(engine, busy_timeout_ms=INLINE_BUSY_TIMEOUT_MS)
            return engine, schema
        connect_args["timeout"] = SQLITE_BUSY_TIMEOUT_MS / 1000
        engine = create_async_engine(parsed, connect_args=connect_args)
        configure_sqlite(engine)
        return engine, schema
    # Named, so an operator finds countersign's connections in pg_stat_activity.
    connect_args["server_settings"] = {"application_name": APPLICATION_NAME}
    if schema is not None:
        connect_args["server_settings"]["search_path"] = schema
    engine = create_async_engine(
        parsed, connect_args=connect_args, pool_size=POSTGRES_POOL_SIZE, max_overflow=0
    )
    configure_postgres(engine)
    return engine, schema


def configure_postgres(engine: AsyncEngine) -> None:
    """Replace a pooled connection the server closed (a restart) instead of using it.

    asyncpg notices the server closing a connection while it sits in the pool, so checking
    ``is_closed()`` on checkout costs no round trip (``pool_pre_ping`` costs three: ``BEGIN``,
    a ping, ``ROLLBACK``); SQLAlchemy retries a checkout that raises ``DisconnectionError``
    with a new connection. A connection closed so recently that asyncpg only refuses to send
    on it (``never_sent``) is invalidated as a disconnect, and ``SQLDatabase`` tries again.
    """

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("the server closed this pooled connection")

    @event.listens_for(engine.sync_engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        if never_sent(context.original_exception):
            context.is_disconnect = True


def configure_sqlite(engine: AsyncEngine, *, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS) -> None:
    """WAL, busy timeout, and our own BEGIN / BEGIN IMMEDIATE on every connection of ``engine``."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Stop the driver from issuing its own BEGIN; _on_begin issues the right one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Connection) -> None:
        options = connection.get_execution_options()
        level = "FULL" if options.get(DURABLE_OPTION, False) else "NORMAL"
        info = connection.connection.info
        if info.get(_SYNC_LEVEL, "NORMAL") != level:  # SQLite refuses it inside a transaction
            connection.exec_driver_sql(f"PRAGMA synchronous = {level}")
            info[_SYNC_LEVEL] = level
        connection.exec_driver_sql("BEGIN IMMEDIATE" if options.get(WRITE_OPTION) else "BEGIN")


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite reporting another connection's lock (worth a retry), raised
    through SQLAlchemy or straight from ``sqlite3``."""
    reason = exc.orig if isinstance(exc, OperationalError) else exc
    if not isinstance(reason, sqlite3.OperationalError):
        return False
    message = str(reason).lower()
    return "database is locked" in message or "database is busy" in message
