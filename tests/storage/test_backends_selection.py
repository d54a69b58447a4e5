"""``create_storage`` picks the backend by URL; the backends are exported from ``storage``."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

import storage
from storage import (
    InMemoryStorage,
    RedisStorage,
    SQLStorage,
    Storage,
    StorageConfigError,
    create_storage,
)
from tests.backends import REDIS_ENV, open_storage
from tests.storage.records import at, claim, snapshot


def test_backends_are_exported() -> None:
    assert {"InMemoryStorage", "RedisStorage", "SQLStorage"} <= set(storage.__all__)
    for name in storage.__all__:
        assert getattr(storage, name) is not None


async def test_each_url_scheme_opens_its_backend(tmp_path: Path) -> None:
    urls = {
        "memory://": InMemoryStorage,
        f"sqlite+aiosqlite:///{tmp_path}/a.db": SQLStorage,
        "postgresql+asyncpg://cs@127.0.0.1:1/cs": SQLStorage,
        "redis://127.0.0.1:1/0": RedisStorage,
    }
    for url, cls in urls.items():
        async with open_storage(url) as store:  # opening connects lazily: no server needed
            assert isinstance(store, cls)
            assert isinstance(store, Storage)


def test_sync_driver_url_is_refused_with_the_async_spelling() -> None:
    with pytest.raises(StorageConfigError, match=r"sqlite\+aiosqlite:///"):
        SQLStorage("sqlite:///cs.db")


def test_schema_option_must_be_a_plain_identifier() -> None:
    with pytest.raises(StorageConfigError, match="identifier"):
        SQLStorage("postgresql+asyncpg://cs@127.0.0.1/cs?schema=a;drop")


def test_key_prefix_comes_from_the_redis_url() -> None:
    store = RedisStorage.from_url("redis://127.0.0.1:6379/0?key_prefix=tenant-a:")

    assert store.key_prefix == "tenant-a:"


def test_default_sqlite_url_creates_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    create_storage()

    assert (tmp_path / "data").is_dir()


@pytest.mark.skipif(not os.environ.get(REDIS_ENV), reason=f"{REDIS_ENV} unset")
async def test_redis_storage_works_on_a_given_bytes_client_and_leaves_it_open() -> None:
    client = aioredis.Redis.from_url(os.environ[REDIS_ENV])  # decode_responses=False
    store = RedisStorage(client, key_prefix=f"test-{uuid.uuid4().hex[:12]}:")
    try:
        await store.save_snapshot(snapshot("run-1", thread_id="T1"))
        await store.claim(claim("run-1", "call_1#0"))
        assert await store.list_snapshots(thread_id="T1") == (
            [snapshot("run-1", thread_id="T1")],
            1,
        )
        assert await store.claim(claim("run-1", "call_1#0", decided_by="U2")) == claim(
            "run-1", "call_1#0"
        )
        assert [c.key for c in await store.list_unfinished_claims(at(60))] == ["call_1#0"]
        assert await store.add_if_absent("k", "v", 60) is True
        assert await store.get_value("k") == "v"
        await store.close()
        assert await client.ping()  # not closed: the storage did not create it
    finally:
        keys = [key async for key in client.scan_iter(match=f"{store.key_prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_unreachable_database_says_what_to_check_without_the_password() -> None:
    store = SQLStorage("postgresql+asyncpg://cs:hunter2@127.0.0.1:1/cs")
    try:
        with pytest.raises(StorageConfigError, match="STORAGE_URL") as caught:
            await store.load_snapshot("run-1")
    finally:
        await store.close()

    assert "hunter2" not in str(caught.value)
    assert "cs:***@127.0.0.1:1/cs" in str(caught.value)
