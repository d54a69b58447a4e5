"""Migration ``0012``: ``snapshots.due_at`` and its index; a decidable run stored before it is
due at once (the next sweep reads it and gives it its moment), on PostgreSQL
``countersign_commit`` writes ``due_at``; all of it goes on downgrade (back to ``0008``'s
function)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from storage import SQLStorage
from storage.sql._migrate import alembic_config
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import T0, at, snapshot


async def test_upgrade_to_0012_makes_the_pending_runs_due_at_once_and_the_failed_ones_never(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v11.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0011"))
        for run_id, decidable in (("pending", 1), ("failed", 0)):
            await conn.exec_driver_sql(
                "INSERT INTO snapshots (run_id, agent_id, thread_id, resource_id, suspended_at,"
                f" version, data, decidable) VALUES ('{run_id}', 'ops', NULL, NULL,"
                f" '2026-01-01 12:00:00.000000', 1, '{{}}', {decidable})"
            )
    await engine.dispose()

    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    try:
        due = await store.list_due(agent_id="ops", until=at(0))
        failed = await store.load_snapshot("failed")
    finally:
        await store.close()

    assert [(s.run_id, s.due_at) for s in due] == [("pending", T0)]
    assert failed is not None and failed.due_at is None


async def test_0012_downgrades_and_upgrades_again(tmp_path: Path) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'cycle.db'}")
    columns = "SELECT name FROM pragma_table_info('snapshots')"
    indexes = "SELECT name FROM sqlite_master WHERE type = 'index'"
    try:
        async with engine.begin() as conn:

            async def shape() -> tuple[bool, bool]:
                cols = {row[0] for row in await conn.exec_driver_sql(columns)}
                idx = {row[0] for row in await conn.exec_driver_sql(indexes)}
                return "due_at" in cols, "ix_snapshots_agent_id_due_at_run_id" in idx

            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
            assert await shape() == (True, True)
            await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0011"))
            assert await shape() == (False, False)
            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
            assert await shape() == (True, True)
    finally:
        await engine.dispose()


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset")
async def test_0012_on_postgres_commits_due_at_and_downgrades_to_0008s_function(
    tmp_path: Path,
) -> None:
    from storage.sql._engine import create_engine

    def commit_function(schema: str) -> str:
        return (
            "SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            f" WHERE proname = 'countersign_commit' AND nspname = '{schema}'"
        )

    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)  # its first use migrates the fresh schema to head
        try:
            await store.save_snapshot(snapshot("r1", due_at=at(30)))
            saved = await store.load_snapshot("r1")
        finally:
            await store.close()
        engine, schema = create_engine(url)
        assert schema is not None
        try:
            async with engine.begin() as conn:
                with_due = (await conn.execute(text(commit_function(schema)))).scalar_one()
                await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0011"))
                before = (await conn.execute(text(commit_function(schema)))).scalar_one()
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
        finally:
            await engine.dispose()

    assert saved is not None and saved.due_at == at(30)
    assert "due_at" in with_due and "due_at" not in before
