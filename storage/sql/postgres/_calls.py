"""``PostgresCalls``: one statement straight on the ``asyncpg`` connection of a pooled one.

The decision path's calls on PostgreSQL are single statements
(``storage.sql.postgres._decision_path``): each is
its own transaction (autocommit), so running it on the driver connection skips SQLAlchemy's
``BEGIN`` / ``COMMIT`` and its per-statement pipeline. The connection still comes from the
engine's pool (a given engine's too), and asyncpg's statement cache keeps each query prepared,
so a call is one round trip.

A pooled connection the server closed (a restart) is found out before anything is sent:
asyncpg marks it closed, or refuses to send on it (``never_sent``); the call is then made once
more on a new connection. A connection lost while the statement ran raises
``StorageUnavailable`` (the statement may have committed), except for a read, tried once more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import asyncpg
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from storage._errors import StorageUnavailable

T = TypeVar("T")

KEPT_CONNECTIONS = 2
"""Connections kept checked out between calls: a checkout through SQLAlchemy's pool costs about
0.05–0.1 ms, half a local round trip, on each of a cycle's four calls. The rest of the pool
stays free for everything else (listing, leases, a burst of calls)."""

_ATTEMPTS = 2
"""A connection found broken when used (or, for a read, one lost mid-call) costs one more
attempt; pooled connections already marked closed are skipped without counting."""


def never_sent(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) is asyncpg refusing to send a statement because its
    connection is closed or broken: the server received nothing, so trying again is safe.

    Right after the server ends an idle connection, asyncpg may have read the goodbye message
    but not yet the end of the stream: the connection does not look closed, and refuses to
    switch to a new operation (``InternalClientError``).
    """
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, asyncpg.InternalClientError):
            return True
        if isinstance(cause, asyncpg.InterfaceError) and "connection is closed" in str(cause):
            return True
        cause = getattr(cause, "orig", None) or cause.__cause__
    return False


class PostgresCalls:
    """Runs one statement at a time on driver connections of ``engine``'s pool."""

    def __init__(self, engine: AsyncEngine, unavailable: Callable[[BaseException], None]) -> None:
        self._engine = engine
        self._unavailable = unavailable
        """Raises ``StorageUnavailable`` when a checkout error says the server is unreachable."""
        self._kept: list[AsyncConnection] = []

    async def close(self) -> None:
        """Return the kept connections to the pool."""
        kept, self._kept = self._kept, []
        for conn in kept:
            await conn.close()

    async def _borrow(self) -> AsyncConnection:
        """A kept connection the server has not closed, else one checked out of the pool."""
        while self._kept:
            conn = self._kept.pop()
            if not _driver(conn).is_closed():
                return conn
            await conn.invalidate()  # closed by the server while kept (a restart)
            await conn.close()
        return await self._engine.connect()

    async def _give_back(self, conn: AsyncConnection) -> None:
        if len(self._kept) < KEPT_CONNECTIONS and not conn.invalidated:
            self._kept.append(conn)
        else:
            await conn.close()

    async def fetchval(self, query: str, *args: object, read: bool = False) -> Any:
        """The first column of the first row of ``query``, run in its own transaction.

        Errors of the statement come back as asyncpg's ``PostgresError`` (the connection is
        kept); an unreachable server or a lost connection as ``StorageUnavailable``. ``read``:
        the statement writes nothing, so a call lost half-way is simply tried again.
        """
        lost: BaseException | None = None
        attempts = _ATTEMPTS
        while attempts:
            try:
                conn = await self._borrow()
                try:
                    driver = _driver(conn)
                    if driver.is_closed():  # closed by the server while pooled: try the next
                        await conn.invalidate()  # (a given engine may have no checkout check)
                        continue
                    attempts -= 1
                    try:
                        return await driver.fetchval(query, *args)
                    except (asyncpg.PostgresError, OSError) as exc:
                        if not (driver.is_closed() or _connection_error(exc)):
                            raise  # the statement failed; the connection is fine
                        lost = exc
                        await _discard(conn, driver)
                    except (asyncpg.InterfaceError, asyncpg.InternalClientError) as exc:
                        await _discard(conn, driver)
                        if not never_sent(exc):
                            raise
                        lost = exc
                        continue
                    except BaseException:  # cancelled, or a driver error: state unknown
                        await _discard(conn, driver)
                        raise
                finally:
                    await self._give_back(conn)
            except (OSError, sa.exc.DBAPIError) as exc:  # the checkout: no server
                self._unavailable(exc)
                raise
            if not read:
                break
        where = self._engine.url.render_as_string(hide_password=True)
        assert lost is not None
        raise StorageUnavailable(where, lost) from lost

    async def transaction(self, work: Callable[[Any], Awaitable[T]]) -> T:
        """``work(driver)`` in one transaction on an ``asyncpg`` connection of the pool: its
        statements commit together when it returns, and are rolled back when it raises.

        A lost connection is ``StorageUnavailable`` (never tried again: the transaction may
        have committed); errors of ``work`` and of its statements are raised as they are.
        """
        try:
            conn = await self._borrow()
        except (OSError, sa.exc.DBAPIError) as exc:  # the checkout: no server
            self._unavailable(exc)
            raise
        try:
            driver = _driver(conn)
            try:
                async with driver.transaction():
                    return await work(driver)
            except (asyncpg.PostgresError, OSError) as exc:
                if not (driver.is_closed() or _connection_error(exc)):
                    raise
                await _discard(conn, driver)
                lost: BaseException = exc
            except (asyncpg.InterfaceError, asyncpg.InternalClientError) as exc:
                await _discard(conn, driver)
                lost = exc
        finally:
            await self._give_back(conn)
        where = self._engine.url.render_as_string(hide_password=True)
        raise StorageUnavailable(where, lost) from lost


def _driver(conn: AsyncConnection) -> Any:
    """The ``asyncpg.Connection`` of ``conn``, read without a greenlet switch (it is checked
    out, so SQLAlchemy has it at hand; ``get_raw_connection()`` costs ~0.02 ms more)."""
    assert conn.sync_connection is not None
    return conn.sync_connection.connection.driver_connection


def _connection_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError | asyncpg.PostgresConnectionError)


async def _discard(conn: AsyncConnection, driver: Any) -> None:
    """Close ``driver`` now and drop it from the pool (a new one is made on demand)."""
    driver.terminate()
    await conn.invalidate()
