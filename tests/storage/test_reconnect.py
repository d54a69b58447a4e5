"""A database restart costs no request: dead pooled connections are replaced before use."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from storage import SQLStorage, StateChange
from storage.sql._engine import APPLICATION_NAME
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import claim, snapshot

pytestmark = [
    # It ends every connection named "countersign" to the test database, other tests' too.
    pytest.mark.serial,
    pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}"),
]


async def test_the_first_call_after_the_server_dropped_every_connection_succeeds(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)
        try:
            assert await store.add_if_absent("k", "v", 60)
            await _drop_every_connection(store)
            assert await store.get_value("k") == "v"
            assert not await store.add_if_absent("k", "w", 60)
        finally:
            await store.close()


async def test_the_decision_path_after_the_server_dropped_every_connection_succeeds(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)
        try:
            await store.commit(StateChange(snapshot=snapshot("run-1")))
            await _drop_every_connection(store)
            assert await store.commit(StateChange(claim=claim("run-1", "call_1#0"))) is None
            await _drop_every_connection(store)
            found, [taken], [] = await store.load_run("run-1")
            assert found == snapshot("run-1") and taken == claim("run-1", "call_1#0")
        finally:
            await store.close()


async def _drop_every_connection(store: SQLStorage) -> None:
    """What a restart does to every connection of ``store`` (pooled, or kept by the decision
    path between calls): the server end goes away."""
    await _terminate_application(APPLICATION_NAME)


async def _terminate_application(name: str) -> None:
    base = os.environ[POSTGRES_ENV].replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(base.split("?")[0])
    try:
        ended = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE application_name = $1 AND datname = current_database()",
            name,
        )
        assert ended, f"no connection named {name!r} to end"
    finally:
        await admin.close()


async def test_on_a_given_engine_the_decision_path_skips_every_dead_pooled_connection(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        parsed = make_url(url)
        schema = str(parsed.query["schema"])
        engine = create_async_engine(  # no pre-ping, no checkout check: the user's engine
            parsed.difference_update_query(["schema"]),
            connect_args={"server_settings": {"search_path": schema, "application_name": schema}},
        )
        async with engine.begin() as conn:
            await conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        store = SQLStorage(engine)
        try:
            await store.commit(StateChange(snapshot=snapshot("run-1")))
            held = [await engine.connect() for _ in range(3)]  # three pooled connections
            for conn in held:
                await conn.exec_driver_sql("SELECT 1")
                await conn.close()
            await _terminate_application(schema)  # those and the one the decision path keeps
            await asyncio.sleep(0.2)  # the pool's connections now know they are closed

            assert await store.commit(StateChange(claim=claim("run-1", "call_1#0"))) is None
            assert (await store.load_run("run-1"))[1] == [claim("run-1", "call_1#0")]
        finally:
            await store.close()
            await engine.dispose()
