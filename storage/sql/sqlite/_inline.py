"""aiosqlite's connection, run in the event loop's own thread: no thread hop per call.

SQLAlchemy's aiosqlite driver sends every cursor call (create, execute, fetch, close) to a
worker thread and waits for the answer: four or five hops per statement, which made a SQLite
transaction cost milliseconds while SQLite itself needs tens of microseconds. ``InlineConnection``
keeps aiosqlite's interface (what SQLAlchemy's driver expects) and runs each call at once.

What that asks in return: a call must never wait long, or it would stall the loop. SQLite in WAL
mode never blocks readers; a writer waiting for another process's write lock gives up after
``BUSY_TIMEOUT_MS`` and ``SQLDatabase.write`` retries it with an asynchronous back-off.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

import aiosqlite

BUSY_TIMEOUT_MS = 20
"""How long one SQLite call may wait for another process's lock (the loop waits with it)."""


class _RunNow:
    """Stands in for aiosqlite's queue to its worker thread: runs each item when it is put."""

    def put_nowait(self, item: tuple[asyncio.Future[Any] | None, Callable[[], Any]]) -> None:
        future, function = item
        try:
            result = function()
        except BaseException as exc:
            if future is not None and not future.done():
                future.set_exception(exc)
            return
        if future is not None and not future.done():
            future.set_result(result)


class InlineConnection(aiosqlite.Connection):
    """An ``aiosqlite.Connection`` whose calls run in the caller's thread."""

    def __init__(self, connector: Callable[[], sqlite3.Connection]) -> None:
        super().__init__(connector, iter_chunk_size=64)
        self._tx = _RunNow()  # type: ignore[assignment]

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    async def _connect(self) -> InlineConnection:
        if self._connection is None:
            self._connection = self._connector()
        return self

    def __await__(self) -> Any:
        return self._connect().__await__()  # no worker thread to start

    @property
    def sqlite3_connection(self) -> sqlite3.Connection:
        """The standard ``sqlite3`` connection underneath (for statements run without a cursor
        wrapper: ``storage.sql.sqlite._decision_path``)."""
        if self._connection is None:
            raise ValueError("Connection closed")
        return self._connection

    def stop(self) -> None:
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def inline_creator(database: str, *, uri: bool) -> Callable[[], Any]:
    """``async_creator`` for ``create_async_engine``: an ``InlineConnection`` to ``database``."""

    async def create() -> InlineConnection:
        def connect() -> sqlite3.Connection:
            return sqlite3.connect(
                database, timeout=BUSY_TIMEOUT_MS / 1000, uri=uri, check_same_thread=False
            )

        connection = InlineConnection(connect)
        return await connection._connect()

    return create
