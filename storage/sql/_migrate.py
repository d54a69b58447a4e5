"""Apply the Alembic migrations in ``storage/migrations`` to a live async engine.

Alembic is synchronous, so it runs through ``AsyncConnection.run_sync`` on a connection of the
storage's own engine (the Alembic cookbook's "connection sharing with asyncio"). The whole
upgrade is one transaction, serialised between processes: SQLite by ``BEGIN IMMEDIATE``,
PostgreSQL by a transaction-scoped advisory lock; whoever comes second finds the schema current.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.sql._engine import WRITE_OPTION
from storage.sql._schema import VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

logger = logging.getLogger(__name__)

HEAD_REVISION = "0012"
"""The newest revision in ``migrations/versions`` (a test keeps the two in step). A database
already there is used without importing Alembic, which keeps process start-up fast."""

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"
"""Where the Alembic environment and revision scripts live (shipped as package data)."""

_ADVISORY_LOCK_KEY = 0x636F756E74657273  # "countersign" folded into a bigint
"""PostgreSQL advisory lock held while migrating, so two processes never migrate at once."""


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic ``Config`` built in code (no alembic.ini), optionally bound to ``connection``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, *, schema: str | None = None) -> str | None:
    """Bring the database behind ``engine`` to the newest revision; return that revision."""
    if await _at_head(engine, schema):
        return HEAD_REVISION
    async with engine.connect() as conn:
        conn = await conn.execution_options(**{WRITE_OPTION: True})
        async with conn.begin():
            if conn.dialect.name == "postgresql":
                await conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK_KEY}
                )
                if schema is not None:
                    await conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            return await conn.run_sync(_upgrade)


async def _at_head(engine: AsyncEngine, schema: str | None) -> bool:
    """True when the version table already names ``HEAD_REVISION`` (no lock, no Alembic)."""
    table = f'"{schema}".{VERSION_TABLE}' if schema else VERSION_TABLE
    try:
        async with engine.connect() as conn:
            row = (await conn.execute(text(f"SELECT version_num FROM {table}"))).first()
    except Exception:
        return False
    return row is not None and row[0] == HEAD_REVISION


def _upgrade(connection: Connection) -> str | None:
    from alembic import command

    before = _current(connection)
    command.upgrade(alembic_config(connection), "head")
    after = _current(connection)
    if before != after:
        logger.info("storage schema migrated from %s to %s", before or "empty", after)
    return after


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()
