"""A database restart costs no request: dead pooled connections are replaced before use."""

from __future__ import annotations

import os
from pathlib import Path

import asyncpg
import pytest

from storage import SQLStorage, StateChange
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import claim, snapshot

pytestmark = pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}")


async def test_the_first_call_after_the_server_dropped_every_connection_succeeds(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)
        try:
            assert await store.add_if_absent("k", "v", 60)
            async with store.engine.connect() as conn:  # the pooled connection's server process
                pid = (await conn.exec_driver_sql("SELECT pg_backend_pid()")).scalar_one()
            # What a restart does to every pooled connection: the server end goes away.
            base = os.environ[POSTGRES_ENV].replace("postgresql+asyncpg://", "postgresql://")
            admin = await asyncpg.connect(base.split("?")[0])
            try:
                assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
            finally:
                await admin.close()
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
    """What a restart does to every pooled connection: the server end goes away."""
    async with store.engine.connect() as conn:
        pid = (await conn.exec_driver_sql("SELECT pg_backend_pid()")).scalar_one()
    base = os.environ[POSTGRES_ENV].replace("postgresql+asyncpg://", "postgresql://")
    admin = await asyncpg.connect(base.split("?")[0])
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()
