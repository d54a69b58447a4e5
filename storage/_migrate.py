"""Apply the Alembic migrations in ``storage/migrations`` to a live async engine.

Alembic is synchronous, so it runs through ``AsyncConnection.run_sync`` on a connection of the
storage's own engine (the Alembic cookbook's "connection sharing with asyncio"). The whole
upgrade is one transaction, serialised between processes: SQLite by ``BEGIN IMMEDIATE``,
PostgreSQL by a transaction-scoped advisory lock; whoever comes second finds the schema current.
"""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from storage._sql_engine import WRITE_OPTION
from storage._sql_schema import VERSION_TABLE

logger = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
"""Where the Alembic environment and revision scripts live (shipped as package data)."""

_ADVISORY_LOCK_KEY = 0x636F756E74657273  # "countersign" folded into a bigint
"""PostgreSQL advisory lock held while migrating, so two processes never migrate at once."""


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic ``Config`` built in code (no alembic.ini), optionally bound to ``connection``."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


async def upgrade(engine: AsyncEngine, *, schema: str | None = None) -> str | None:
    """Bring the database behind ``engine`` to the newest revision; return that revision."""
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


def _upgrade(connection: Connection) -> str | None:
    before = _current(connection)
    command.upgrade(alembic_config(connection), "head")
    after = _current(connection)
    if before != after:
        logger.info("storage schema migrated from %s to %s", before or "empty", after)
    return after


def _current(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()
