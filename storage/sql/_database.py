"""``SQLDatabase``: the connection plumbing under ``SQLStorage``.

One object owns the async engine and runs work on it: reads on a plain connection, writes in one
transaction each (SQLite: ``BEGIN IMMEDIATE``, queued per process, retried while another process
holds the lock), the schema migrated before the first use. The decision path skips SQLAlchemy's
statement pipeline: on a SQLite file its transactions run on one ``sqlite3`` connection of the
pool (``sqlite_connection``, ``sqlite_write``, ``sqlite_read``), on PostgreSQL its single
statements on the pool's driver connections (``postgres()``, ``storage.sql.postgres._calls``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import time
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from storage._errors import StorageConfigError, StorageUnavailable
from storage.sql import _migrate
from storage.sql._engine import DURABLE_OPTION, WRITE_OPTION, create_engine, is_locked
from storage.sql.postgres._calls import PostgresCalls, never_sent
from storage.sql.sqlite._checkpoints import Checkpoints
from storage.sql.sqlite._inline import InlineConnection

logger = logging.getLogger(__name__)

T = TypeVar("T")

LOCK_WAIT_SECONDS = 30.0
"""How long a write keeps retrying while SQLite reports another process's lock."""


class SQLDatabase:
    """An async engine (made from a URL, or given and never disposed) and how work runs on it."""

    def __init__(self, url_or_engine: str | URL | AsyncEngine) -> None:
        if isinstance(url_or_engine, AsyncEngine):
            self.engine = url_or_engine
            self._schema: str | None = None
            self._owns_engine = False
        else:
            self.engine, self._schema = create_engine(url_or_engine)
            self._owns_engine = True
        self._url = url_or_engine if not isinstance(url_or_engine, AsyncEngine) else None
        self.dialect = self.engine.dialect.name
        """``sqlite`` or ``postgresql``."""
        if self.dialect not in ("sqlite", "postgresql"):
            raise StorageConfigError(
                f"SQLStorage supports SQLite and PostgreSQL, not {self.dialect!r}: "
                "use a sqlite+aiosqlite:// or postgresql+asyncpg:// URL"
            )
        self._writer = self.engine.execution_options(**{WRITE_OPTION: True})
        self._durable_writer = self.engine.execution_options(
            **{WRITE_OPTION: True, DURABLE_OPTION: True}
        )
        # SQLite has one writer at a time: queue this process's writers here rather than in
        # SQLite's busy handler, which sleeps in growing steps; other processes still wait there.
        self._sqlite_writer = asyncio.Lock() if self.dialect == "sqlite" else None
        self._migrated = False
        self._migrate_lock = asyncio.Lock()
        self._driver: AsyncConnection | None = None
        self._sqlite3: sqlite3.Connection | None = None
        self._checkpoints: Checkpoints | None = None
        self._driver_checked = False
        self._driver_lock = asyncio.Lock()
        self._postgres = (
            PostgresCalls(self.engine, self._raise_unavailable)
            if self.dialect == "postgresql"
            else None
        )

    async def migrate(self) -> str | None:
        """Apply pending migrations now; return the revision.

        Raises ``StorageConfigError`` when the database cannot be reached. Another process
        migrating the same SQLite file at the same moment is waited for.
        """
        async with self._migrate_lock:
            deadline = time.monotonic() + LOCK_WAIT_SECONDS
            attempt = 0
            while True:
                try:
                    revision = await self._upgrade()
                    break
                except (OSError, sa.exc.DBAPIError) as exc:
                    locked = is_locked(exc)
                    if locked and time.monotonic() < deadline:
                        attempt += 1
                        await asyncio.sleep(random.uniform(0, min(0.01 * 2**attempt, 0.2)))
                        continue
                    if locked:
                        raise
                    shown = self.engine.url.render_as_string(hide_password=True)
                    reason = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
                    raise StorageConfigError(
                        f"cannot open the storage database {shown} ({type(reason).__name__}: "
                        f"{reason}): check STORAGE_URL and that the database server is running"
                    ) from exc
            self._migrated = True
            return revision

    async def _upgrade(self) -> str | None:
        """Alembic's upgrade. A SQLite file we opened is migrated over a connection that waits
        in its own thread for another process's lock (ours run in the loop, briefly)."""
        if self.dialect != "sqlite" or self._url is None:
            return await _migrate.upgrade(self.engine, schema=self._schema)
        patient, _ = create_engine(self._url, inline=False)
        try:
            return await _migrate.upgrade(patient, schema=None)
        finally:
            await patient.dispose()

    async def close(self) -> None:
        """Dispose the engine if it was made here."""
        if self._postgres is not None:
            await self._postgres.close()
        if self._driver is not None:
            if self._sqlite3 is not None:
                Checkpoints.release(self._sqlite3)
            await self._driver.close()  # back to the pool, which dispose() then closes
            self._driver = self._sqlite3 = None
            self._checkpoints = None
            self._driver_checked = False
        if self._owns_engine:
            await self.engine.dispose()

    async def sqlite_connection(self) -> sqlite3.Connection | None:
        """The ``sqlite3`` connection the decision path runs on, in the event loop's thread;
        None unless this is a SQLite file opened by URL (``storage.sql.sqlite._inline``).

        One connection of the engine's pool, checked out once and kept (it carries the engine's
        pragmas; it checkpoints before ordinary writes, never in a durable commit:
        ``storage.sql.sqlite._checkpoints``). Sharing it between coroutines is safe because
        every transaction on it runs from ``BEGIN`` to ``COMMIT`` without awaiting
        (``sqlite_write`` / ``sqlite_read``).
        """
        if not self._driver_checked:
            async with self._driver_lock:  # once, however many callers arrive together
                if not self._driver_checked:
                    self._sqlite3 = await self._check_out_sqlite3()
                    self._driver_checked = True
        return self._sqlite3

    async def _check_out_sqlite3(self) -> sqlite3.Connection | None:
        if self.dialect != "sqlite":
            return None
        await self._ready()
        conn = await self.engine.connect()
        raw = await conn.get_raw_connection()
        if not isinstance(raw.driver_connection, InlineConnection):
            await conn.close()
            return None
        self._driver = conn
        sqlite3_connection = raw.driver_connection.sqlite3_connection
        self._checkpoints = Checkpoints(sqlite3_connection)
        return sqlite3_connection

    async def postgres(self) -> PostgresCalls | None:
        """Single statements on the driver connections of the pool
        (``storage.sql.postgres._calls``),
        the schema migrated first; None unless this is PostgreSQL."""
        if self._postgres is not None:
            await self._ready()
        return self._postgres

    async def sqlite_write(
        self,
        conn: sqlite3.Connection,
        work: Callable[[sqlite3.Connection], T],
        *,
        durable: bool = False,
    ) -> T:
        """``work(conn)`` in one ``BEGIN IMMEDIATE`` transaction, queued behind this process's
        other writers and retried while another process holds the lock. ``durable``: synced to
        disk before this returns (``synchronous = FULL`` for this transaction only: one sync of
        the log, never a checkpoint: ordinary writes run those)."""

        async def once() -> T:
            async with self._sqlite_writer or nullcontext():
                if self._checkpoints is not None:
                    self._checkpoints.before_write(conn, durable=durable)
                if not durable:
                    return _in_transaction(conn, "BEGIN IMMEDIATE", work)
                conn.execute("PRAGMA synchronous = FULL")  # not allowed inside a transaction
                try:
                    return _in_transaction(conn, "BEGIN IMMEDIATE", work)
                finally:
                    conn.execute("PRAGMA synchronous = NORMAL")

        return await self._while_locked(once)

    async def sqlite_read(
        self, conn: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]
    ) -> T:
        """``work(conn)`` in one read transaction (one consistent snapshot of the file)."""

        async def once() -> T:
            return _in_transaction(conn, "BEGIN", work)

        return await self._while_locked(once)

    async def read(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """Run ``work`` on a connection (it may open its own transaction)."""

        async def once() -> T:
            async with self.engine.connect() as conn:
                return await work(conn)

        return await self._while_locked(once)

    async def write(
        self, work: Callable[[AsyncConnection], Awaitable[T]], *, durable: bool = False
    ) -> T:
        """Run ``work`` in one write transaction, retrying while SQLite reports a lock;
        ``durable``: on disk when it commits (SQLite ``synchronous = FULL`` for it)."""
        writer = self._durable_writer if durable else self._writer

        async def once() -> T:
            async with self._sqlite_writer or nullcontext(), writer.begin() as conn:
                return await work(conn)

        return await self._while_locked(once)

    async def _while_locked(self, once: Callable[[], Awaitable[T]]) -> T:
        """``once()``, retried with a back-off while SQLite reports another process's lock (up
        to ``LOCK_WAIT_SECONDS``); an unreachable server is raised as ``StorageUnavailable``."""
        await self._ready()
        attempt = 0
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                return await once()
            except (OSError, sa.exc.DBAPIError, sqlite3.OperationalError) as exc:
                attempt += 1
                if attempt == 1 and self.dialect == "postgresql" and never_sent(exc):
                    continue  # a connection the server had just closed: nothing was sent
                locked = is_locked(exc)
                if self.dialect != "sqlite" or not locked or time.monotonic() > deadline:
                    self._raise_unavailable(exc)
                    raise
                logger.debug("SQLite database busy, retry %d", attempt)
                await asyncio.sleep(random.uniform(0, min(0.002 * 2**attempt, 0.1)))

    def insert(self, table: sa.Table) -> Any:
        """A dialect-specific INSERT (both offer ``on_conflict_do_*``)."""
        return (postgresql.insert if self.dialect == "postgresql" else sqlite.insert)(table)

    def _raise_unavailable(self, exc: BaseException) -> None:
        """Raise ``StorageUnavailable`` when ``exc`` says the server is unreachable."""
        if isinstance(exc, sa.exc.DBAPIError):
            lost = exc.connection_invalidated or isinstance(exc.orig, OSError)
            if not lost and self.dialect == "postgresql":
                lost = isinstance(exc, sa.exc.OperationalError | sa.exc.InterfaceError)
                lost = lost or _server_unavailable(exc.orig)
            if not lost:
                return
        elif not isinstance(exc, OSError):
            return
        where = self.engine.url.render_as_string(hide_password=True)
        raise StorageUnavailable(where, exc) from exc

    async def _ready(self) -> None:
        if not self._migrated:
            await self.migrate()


def _in_transaction(
    conn: sqlite3.Connection, begin: str, work: Callable[[sqlite3.Connection], T]
) -> T:
    """``begin``, ``work(conn)``, ``COMMIT``; ``ROLLBACK`` when anything raises. Never awaits, so
    no other coroutine can run a statement on ``conn`` in between."""
    conn.execute(begin)
    try:
        result = work(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def _server_unavailable(error: BaseException | None) -> bool:
    """A PostgreSQL error whose SQLSTATE says the server cannot serve now (class 08, connection
    exception; 57P, shut down or starting up: "the database system is shutting down")."""
    while error is not None:
        state = getattr(error, "sqlstate", None)
        if isinstance(state, str):
            return state.startswith(("08", "57P"))
        error = error.__cause__
    return False
