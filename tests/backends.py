"""Every storage backend for tests, each on a real server and isolated per test.

Import it from any test folder::

    # tests/agents/conftest.py: make the fixtures available there
    from tests.backends import storage, storage_url  # noqa: F401

    async def test_run_survives_restart(storage_url: str) -> None:
        async with open_storage(storage_url) as store:   # first "process"
            ...
        async with open_storage(storage_url) as store:   # after the restart: same data
            ...

``storage_url`` is parametrized over ``BACKENDS`` (ids ``memory``, ``sqlite``, ``postgres``,
``redis``) and yields a URL nobody else uses: a SQLite file in ``tmp_path``, a fresh PostgreSQL
schema (``?schema=``), a fresh Redis key prefix (``?key_prefix=``); PostgreSQL and Redis data is
dropped after the test. ``storage`` yields an open store on that URL. PostgreSQL and Redis come
from ``TEST_POSTGRES_URL`` / ``TEST_REDIS_URL`` (``.ci/run`` sets both) and are skipped only when
their variable is unset. ``memory://`` opens a new empty store each time: check
``survives_reopen(url)`` before testing a restart.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from storage import Storage, create_storage

POSTGRES_ENV = "TEST_POSTGRES_URL"
REDIS_ENV = "TEST_REDIS_URL"

BACKENDS = [
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=pytest.mark.skipif(
            not os.environ.get(POSTGRES_ENV),
            reason=f"set {POSTGRES_ENV}=postgresql+asyncpg://postgres@127.0.0.1:5432/test",
        ),
    ),
    pytest.param(
        "redis",
        id="redis",
        marks=pytest.mark.skipif(
            not os.environ.get(REDIS_ENV), reason=f"set {REDIS_ENV}=redis://127.0.0.1:6379/15"
        ),
    ),
]
"""``pytest.param`` per backend, skipped when its server is not configured."""

SHARED_BACKENDS = [p for p in BACKENDS if p.values[0] != "memory"]
"""The backends that several processes (or a restarted one) can share."""


def survives_reopen(url: str) -> bool:
    """Whether opening ``url`` again finds the same data (everything but ``memory://``)."""
    return not url.startswith("memory://")


@asynccontextmanager
async def unique_url(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """A storage URL of ``backend`` that no other test uses; its server data is dropped after."""
    tag = uuid.uuid4().hex[:12]
    if backend == "memory":
        yield "memory://"
    elif backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / f'storage-{tag}.db'}"
    elif backend == "postgres":
        base = os.environ[POSTGRES_ENV]
        schema = f"test_{tag}"
        try:
            yield f"{base}{'&' if '?' in base else '?'}schema={schema}"
        finally:
            await _drop_postgres_schema(base, schema)
    elif backend == "redis":
        base = os.environ[REDIS_ENV]
        prefix = f"test-{tag}:"
        try:
            yield f"{base}{'&' if '?' in base else '?'}key_prefix={prefix}"
        finally:
            await _drop_redis_prefix(base, prefix)
    else:
        raise ValueError(f"unknown backend {backend!r}: use one of memory, sqlite, postgres, redis")


@asynccontextmanager
async def open_storage(url: str) -> AsyncIterator[Storage]:
    """``create_storage(url)``, closed on exit."""
    store = create_storage(url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture(params=BACKENDS)
async def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """An isolated URL of each backend in turn."""
    async with unique_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def storage(storage_url: str) -> AsyncIterator[Storage]:
    """An open store on ``storage_url``."""
    async with open_storage(storage_url) as store:
        yield store


async def _drop_postgres_schema(url: str, schema: str) -> None:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        await engine.dispose()


async def _drop_redis_prefix(url: str, prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()
