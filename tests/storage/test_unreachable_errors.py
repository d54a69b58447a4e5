"""Which database errors mean "the server cannot serve now" (``StorageUnavailable``: an outage,
logged as one line and waited out) rather than a bug. Found by the chaos test: a PostgreSQL
shutting down answers new connections with SQLSTATE 57P03 ("the database system is shutting
down"), which reached the log as an ERROR traceback instead of the outage it is."""

from __future__ import annotations

import asyncpg
import pytest
import sqlalchemy as sa

from storage import StorageUnavailable
from storage.sql._database import SQLDatabase

pytestmark = pytest.mark.asyncio


def _wrapped(error: Exception) -> sa.exc.DBAPIError:
    adapted = Exception(str(error))  # as SQLAlchemy's asyncpg adapter wraps it
    adapted.__cause__ = error
    return sa.exc.DBAPIError("SELECT 1", None, adapted)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.CannotConnectNowError("the database system is shutting down"),
        asyncpg.exceptions.AdminShutdownError("terminating connection"),
        asyncpg.exceptions.ConnectionFailureError("connection failure"),
    ],
)
async def test_a_server_shutting_down_or_starting_is_unavailable(error: Exception) -> None:
    db = SQLDatabase("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    try:
        with pytest.raises(StorageUnavailable):
            db._raise_unavailable(_wrapped(error))
    finally:
        await db.engine.dispose()


async def test_a_query_the_server_refuses_is_not_an_outage() -> None:
    db = SQLDatabase("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    try:
        db._raise_unavailable(_wrapped(asyncpg.exceptions.UndefinedTableError("no such table")))
    finally:
        await db.engine.dispose()
