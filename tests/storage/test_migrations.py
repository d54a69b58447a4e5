"""Alembic migrations: ``python -m storage upgrade``, automatic upgrade on first use."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from storage import Completion, SQLStorage, StaleLease, StateChange, create_storage, utcnow
from storage.sql._migrate import alembic_config
from storage.sql._schema import VERSION_TABLE, metadata
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import T0, at

pytestmark = pytest.mark.processes

TABLES = {
    "snapshots",
    "claims",
    "threads",
    "messages",
    "audit",
    "kv",
    "cards",
    "outbox",
    VERSION_TABLE,
}
HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


def _cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "STORAGE_URL"}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "storage", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _sqlite_state(path: Path) -> tuple[set[str], list[str]]:
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        versions = [r[0] for r in db.execute(f"SELECT version_num FROM {VERSION_TABLE}")]
    return tables, versions


def test_upgrade_creates_the_schema_and_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "cs.db"
    url = f"sqlite+aiosqlite:///{path}"

    first = _cli("upgrade", "--url", url, cwd=tmp_path)
    second = _cli("upgrade", "--url", url, cwd=tmp_path)

    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert f"revision {HEAD}" in second.stdout
    tables, versions = _sqlite_state(path)
    assert tables >= TABLES
    assert versions == [HEAD]


def test_upgrade_reads_storage_url_then_falls_back_to_the_default(tmp_path: Path) -> None:
    from_env = _cli(
        "upgrade", cwd=tmp_path, env={"STORAGE_URL": f"sqlite+aiosqlite:///{tmp_path}/env.db"}
    )
    default = _cli("upgrade", cwd=tmp_path)

    assert from_env.returncode == 0, from_env.stderr
    assert default.returncode == 0, default.stderr
    assert _sqlite_state(tmp_path / "env.db")[0] >= TABLES
    assert _sqlite_state(tmp_path / "data" / "countersign.db")[0] >= TABLES


def test_upgrade_of_a_schemaless_backend_just_says_so(tmp_path: Path) -> None:
    result = _cli("upgrade", "--url", "memory://", cwd=tmp_path)

    assert result.returncode == 0
    assert "no schema" in result.stdout


def test_bad_url_fails_with_a_fix_and_without_the_password(tmp_path: Path) -> None:
    result = _cli("upgrade", "--url", "postgresql://admin:hunter2@db/cs", cwd=tmp_path)

    assert result.returncode == 2
    assert "postgresql+asyncpg://" in result.stderr
    assert "hunter2" not in result.stderr + result.stdout


async def test_first_use_migrates_a_fresh_file(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    store = create_storage(f"sqlite+aiosqlite:///{path}")
    try:
        assert await store.load_snapshot("run-1") is None
    finally:
        await store.close()

    tables, versions = _sqlite_state(path)
    assert tables >= TABLES and versions == [HEAD]


async def test_given_engine_is_migrated_but_not_disposed(tmp_path: Path) -> None:
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'own.db'}")
    store = SQLStorage(engine)
    await store.add_if_absent("k", "v", 60)
    await store.close()

    async with engine.connect() as conn:  # still usable: the storage did not dispose it
        assert (await conn.exec_driver_sql("SELECT value FROM kv")).scalar_one() == "v"
    await engine.dispose()


def _diff(connection: Connection) -> list[object]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "version_table": VERSION_TABLE}
    )
    return list(compare_metadata(context, metadata))


@pytest.mark.parametrize(
    "backend",
    [
        "sqlite",
        pytest.param(
            "postgres",
            marks=pytest.mark.skipif(
                not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset"
            ),
        ),
    ],
)
async def test_migrated_schema_matches_the_table_definitions(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        store = SQLStorage(url)
        try:
            assert await store.migrate() == HEAD
            async with store.engine.connect() as conn:
                assert await conn.run_sync(_diff) == []
        finally:
            await store.close()


async def test_first_use_upgrades_an_older_schema_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0001"))
        await conn.exec_driver_sql(
            "INSERT INTO snapshots VALUES "
            "('run-1', 'ops', 'T1', NULL, '2026-01-01 12:00:00.000000', 1, '{\"k\": 1}')"
        )
    await engine.dispose()

    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    try:
        found, total = await store.list_snapshots(thread_id="T1")
    finally:
        await store.close()

    assert total == 1 and found[0].data == {"k": 1} and found[0].suspended_at == T0
    assert _sqlite_state(path)[1] == [HEAD]


def test_head_revision_constant_matches_the_newest_migration() -> None:
    from alembic.script import ScriptDirectory

    from storage.sql._migrate import HEAD_REVISION, alembic_config

    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD_REVISION


async def test_upgrade_to_0003_keeps_runs_decidable_and_claims_leaseless(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0002"))
        await conn.exec_driver_sql(
            "INSERT INTO snapshots VALUES "
            "('run-1', 'ops', 'T1', NULL, '2026-01-01 12:00:00.000000', 1, '{}')"
        )
        await conn.exec_driver_sql(
            "INSERT INTO claims VALUES ('run-1', 'k#0', NULL, 'approved', 'U1', "
            "'2026-01-01 12:00:00.000000', '{}', 'claimed', NULL, NULL)"
        )
    await engine.dispose()

    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    try:
        found, total = await store.list_snapshots(decidable_only=True)
        taken = await store.take_over_expired_claims("B", now=T0, lease_until=T0)
    finally:
        await store.close()

    assert total == 1 and found[0].decidable
    assert [(c.key, c.owner) for c in taken] == [("k#0", "B")]


@pytest.mark.parametrize(
    "backend",
    [
        "sqlite",
        pytest.param(
            "postgres",
            marks=pytest.mark.skipif(
                not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset"
            ),
        ),
    ],
)
async def test_upgrade_to_0007_moves_cards_out_of_audit_and_the_outbox_out_of_memory(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        await _at_0006_with_presented_events_and_an_outbox_thread(url)
        store = SQLStorage(url)
        try:
            card = await store.get_card("r1", "c1")
            entries = await store.list_outbox()
            left_in_memory = await store.list_messages(OUTBOX)
            thread = await store.get_thread(OUTBOX)
            done_mark = await store.get_value("slack:outbox:done:w1")
            events = await store.query_audit(run_id="r1")
        finally:
            await store.close()

    assert card is not None
    assert (card.team, card.channel, card.ts, card.thread_ts) == ("T1", "C1", "2.0", "0.5")
    assert card.posted_at == T0 + timedelta(seconds=2)
    assert card.shown == {**SHOWN, "question": {"q": 1}}
    assert [(e.id, e.attempts, e.write["blocks"]) for e in entries] == [("w2", 0, [])]
    assert entries[0].write["text"] == "Approved" and entries[0].next_try_at <= utcnow()
    assert (left_in_memory, thread, done_mark) == ([], None, None)
    assert [e.id for e in events] == ["e1", "e2"]  # presentations stay audited


OUTBOX = "countersign:slack-outbox"
SHOWN = {"tool_name": "delete_record", "args": {"id": "7"}, "fingerprint": "f"}


async def _at_0006_with_presented_events_and_an_outbox_thread(url: str) -> None:
    """A database at revision 0006 holding what the edge kept there: two ``presented`` events
    of one call, the outbox thread with a made write, a pending one and a stale one."""
    from storage.sql._engine import create_engine
    from storage.sql._schema import audit, kv, messages, threads

    now = utcnow()
    engine, schema = create_engine(url)
    where = {"channel": "C1", "thread_ts": "0.5"}
    outbox = OUTBOX

    def presented(n: int, ts: str, **data: object) -> dict[str, object]:
        return {
            "id": f"e{n}", "at": T0 + timedelta(seconds=n), "kind": "presented", "run_id": "r1",
            "tool_call_id": "c1", "thread_id": "slack:T9:C1:0.5", "agent_id": "ops",
            "actor": "U1", "source": "slack", "data": {**where, "ts": ts, **SHOWN, **data},
        }  # fmt: skip

    def write(n: int, created: object) -> dict[str, object]:
        content = {"id": f"w{n}", "method": "chat.update", "channel": "C1", "ts": "1.0",
                   "text": "Approved", "blocks": []}  # fmt: skip
        return {"id": f"w{n}", "thread_id": outbox, "resource_id": None, "run_id": None,
                "role": "system", "content": content, "created_at": created}  # fmt: skip

    async with engine.begin() as conn:
        if schema is not None:
            await conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0006"))
        await conn.execute(
            audit.insert(),
            [presented(1, "1.0"), presented(2, "2.0", team="T1", question={"q": 1})],
        )
        await conn.execute(
            threads.insert(),
            [{"thread_id": outbox, "resource_id": None, "created_at": now, "updated_at": now,
              "metadata": {}}],
        )  # fmt: skip
        await conn.execute(
            messages.insert(),
            [write(1, now), write(2, now), write(3, now - timedelta(days=31))],
        )
        await conn.execute(
            kv.insert(),
            [{"key": "slack:outbox:done:w1", "value": "1", "expires_at": now + timedelta(days=1)}],
        )
    await engine.dispose()


async def test_upgrade_to_0007_gives_a_card_without_workspace_its_threads_team(
    tmp_path: Path,
) -> None:
    from storage.sql._schema import audit

    path = tmp_path / "v6.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0006"))
        await conn.execute(
            audit.insert(),
            [{"id": "e1", "at": T0, "kind": "presented", "run_id": "r1", "tool_call_id": "c1",
              "thread_id": "slack:T9:C1:0.5", "agent_id": None, "actor": None, "source": None,
              "data": {"channel": "C1", "ts": "1.0", "thread_ts": "0.5", "fingerprint": "f",
                       "tool_name": "delete_record", "args": {}}}],
        )  # fmt: skip
    await engine.dispose()

    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    try:
        card = await store.get_card("r1", "c1")
    finally:
        await store.close()

    assert card is not None and (card.team, card.thread_ts) == ("T9", "0.5")


async def test_upgrade_to_0008_reads_old_claims_at_epoch_zero_and_fences_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v7.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0007"))
        await conn.exec_driver_sql(
            "INSERT INTO claims VALUES ('run-1', 'k#0', 'k', 'approved', 'U1', "
            "'2026-01-01 12:00:00.000000', '{}', 'claimed', NULL, NULL, 'A', "
            "'2026-01-01 12:00:00.000000')"
        )
    await engine.dispose()

    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    try:
        [old] = await store.list_claims("run-1")
        [taken] = await store.take_over_expired_claims("B", now=at(1), lease_until=at(60))
        stale = Completion(run_id="run-1", key="k#0", outcome={}, owner="A", epoch=0)
        with pytest.raises(StaleLease):
            await store.commit(StateChange(completions=[stale]))
        renewed = await store.renew_lease("run-1", "k#0", "A", at(90), epoch=0)
    finally:
        await store.close()

    assert (old.owner, old.epoch) == ("A", 0)
    assert (taken.owner, taken.epoch) == ("B", 1)
    assert renewed is False


async def test_0008_downgrades_and_upgrades_again(tmp_path: Path) -> None:
    path = tmp_path / "cycle.db"
    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
        await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0007"))
        columns = await conn.exec_driver_sql("SELECT name FROM pragma_table_info('claims')")
        assert "epoch" not in {row[0] for row in columns}
        await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
    await engine.dispose()
    assert _sqlite_state(path)[1] == [HEAD]


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset")
async def test_0008_on_postgres_fences_in_countersign_commit_and_downgrades_to_0005s(
    tmp_path: Path,
) -> None:
    from sqlalchemy import text

    from storage.sql._engine import create_engine

    def commit_function(schema: str) -> str:
        return (
            "SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            f" WHERE proname = 'countersign_commit' AND nspname = '{schema}'"
        )

    async with unique_url("postgres", tmp_path) as url:
        engine, schema = create_engine(url)
        assert schema is not None
        try:
            async with engine.begin() as conn:
                await conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
                fenced = (await conn.execute(text(commit_function(schema)))).scalar_one()
                await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0007"))
                before = (await conn.execute(text(commit_function(schema)))).scalar_one()
                columns = await conn.execute(
                    text(
                        "SELECT column_name FROM information_schema.columns"
                        f" WHERE table_schema = '{schema}' AND table_name = 'claims'"
                    )
                )
                assert "epoch" not in set(columns.scalars())
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "head"))
        finally:
            await engine.dispose()

    assert "CS423" in fenced and "epoch" in fenced
    assert "CS423" not in before
