"""Migration ``0010``: the ``escalations`` table, and on PostgreSQL a ``countersign_load_run``
that reads a run's escalation steps too; both go on downgrade (back to ``0005``'s function)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from storage.sql._migrate import alembic_config
from tests.backends import POSTGRES_ENV, unique_url


async def test_0010_downgrades_and_upgrades_again(tmp_path: Path) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'cycle.db'}")
    tables = "SELECT name FROM sqlite_master WHERE type = 'table'"
    try:
        async with engine.begin() as conn:
            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
            assert "escalations" in {row[0] for row in await conn.exec_driver_sql(tables)}
            await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0008"))
            assert "escalations" not in {row[0] for row in await conn.exec_driver_sql(tables)}
            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
            assert "escalations" in {row[0] for row in await conn.exec_driver_sql(tables)}
    finally:
        await engine.dispose()


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset")
async def test_0010_on_postgres_loads_escalations_with_the_run_and_downgrades_to_0005s(
    tmp_path: Path,
) -> None:
    from storage.sql._engine import create_engine

    def load_function(schema: str) -> str:
        return (
            "SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            f" WHERE proname = 'countersign_load_run' AND nspname = '{schema}'"
        )

    async with unique_url("postgres", tmp_path) as url:
        engine, schema = create_engine(url)
        assert schema is not None
        try:
            async with engine.begin() as conn:
                await conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
                with_steps = (await conn.execute(text(load_function(schema)))).scalar_one()
                await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0008"))
                before = (await conn.execute(text(load_function(schema)))).scalar_one()
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
        finally:
            await engine.dispose()

    assert "escalations" in with_steps and "escalations" not in before
