"""PostgreSQL: the decision path's functions (migration 0005) store what SQLAlchemy stores,
live in the storage's own schema, work on a given engine, and report an outage."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from storage import (
    ApprovalRecord,
    Completion,
    SQLStorage,
    StateChange,
    StorageUnavailable,
    ThreadRecord,
)
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import T0, at, claim, message, snapshot
from tests.storage.records import event as audit_event

pytestmark = pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}")

DOCUMENT = {"z": 1, "a": {"y": [3, {"c": None, "b": "é\x00"}], "x": 1.5}}
THREAD = ThreadRecord(
    thread_id="T1", resource_id="U1", created_at=T0, updated_at=at(1), metadata=DOCUMENT
)
ROWS = {  # each table's rows as PostgreSQL prints them (JSON columns: the stored text)
    "snapshots": "SELECT t::text FROM snapshots AS t ORDER BY run_id",
    "claims": "SELECT (run_id, key, tool_call_id, decision, decided_by, decided_at, detail,"
    " status, outcome, completed_at IS NULL, owner, lease_until)::text FROM claims"
    " ORDER BY run_id, key",  # completed_at: the clock at the write
    "approvals": "SELECT t::text FROM approvals AS t ORDER BY run_id, key, approver",
    "threads": "SELECT t::text FROM threads AS t ORDER BY thread_id",
    "messages": "SELECT t::text FROM messages AS t ORDER BY seq",
    "audit": "SELECT t::text FROM audit AS t ORDER BY seq",
}


async def _rows(store: SQLStorage) -> dict[str, list[str]]:
    async with store.engine.connect() as conn:
        return {
            table: list((await conn.exec_driver_sql(query)).scalars())
            for table, query in ROWS.items()
        }


async def test_the_functions_store_exactly_what_the_single_writes_store(tmp_path: Path) -> None:
    decision = claim("run-1", "call_1#0", detail=DOCUMENT, owner="A", lease_until=at(30.5))
    done = claim("run-1", "call_0#0", second=0.25)
    async with unique_url("postgres", tmp_path) as one, unique_url("postgres", tmp_path) as two:
        by_commit, by_calls = SQLStorage(one), SQLStorage(two)
        try:
            for store in (by_commit, by_calls):
                await store.claim(done)
            await by_commit.commit(
                StateChange(
                    claim=decision,
                    completions=[Completion(run_id="run-1", key="call_0#0", outcome=DOCUMENT)],
                    snapshot=snapshot("run-1", data=DOCUMENT, second=1.000001),
                    thread=THREAD,
                    messages=[message("T1", n) for n in range(2)],
                    audit=[audit_event(n, run_id="run-1") for n in range(2)],
                )
            )
            await by_calls.claim(decision)
            await by_calls.complete_claim("run-1", "call_0#0", DOCUMENT)
            await by_calls.save_snapshot(snapshot("run-1", data=DOCUMENT, second=1.000001))
            await by_calls.save_thread(THREAD)
            await by_calls.append_messages([message("T1", n) for n in range(2)])
            for n in range(2):
                await by_calls.append_audit(audit_event(n, run_id="run-1"))
            committed, called = await _rows(by_commit), await _rows(by_calls)
        finally:
            await by_commit.close()
            await by_calls.close()

    assert committed == called
    assert all(committed[table] for table in ROWS if table != "approvals")


async def test_each_schema_has_its_own_functions_and_sees_only_its_rows(tmp_path: Path) -> None:
    async with unique_url("postgres", tmp_path) as one, unique_url("postgres", tmp_path) as two:
        first, second = SQLStorage(one), SQLStorage(two)
        try:
            await first.commit(StateChange(snapshot=snapshot("run-1")))
            await second.commit(StateChange(claim=claim("run-1", "call_1#0")))
            await second.add_approval(
                ApprovalRecord(run_id="run-1", key="k", approver="U1", approved_at=T0)
            )
            assert await first.load_run("run-1") == (snapshot("run-1"), [], [])
            _, [taken], [_approved] = await second.load_run("run-1")
            assert await second.load_snapshot("run-1") is None and taken.key == "call_1#0"
            async with first.engine.connect() as conn:
                result = await conn.exec_driver_sql(
                    "SELECT n.nspname, count(*) FROM pg_proc p JOIN pg_namespace n"
                    " ON n.oid = p.pronamespace WHERE p.proname LIKE 'countersign_%'"
                    " AND n.nspname IN ($1, $2) GROUP BY n.nspname",
                    (_schema(one), _schema(two)),
                )
                per_schema = {row[0]: row[1] for row in result}
        finally:
            await first.close()
            await second.close()

    assert per_schema == {_schema(one): 3, _schema(two): 3}


async def test_a_given_engine_runs_the_functions_and_stays_open(tmp_path: Path) -> None:
    # Its sessions show times in Kathmandu: +05:45, and +05:41:16 (local mean time) in 1900.
    old = dataclasses.replace(
        snapshot("run-1"), suspended_at=datetime(1900, 1, 1, 12, 0, 0, 1, UTC)
    )
    async with unique_url("postgres", tmp_path) as url:
        engine = create_async_engine(
            make_url(url).difference_update_query(["schema"]),
            connect_args={
                "server_settings": {"search_path": _schema(url), "timezone": "Asia/Kathmandu"}
            },
        )
        async with engine.begin() as conn:
            await conn.exec_driver_sql(f'CREATE SCHEMA "{_schema(url)}"')
        store = SQLStorage(engine)
        await store.commit(StateChange(snapshot=old))
        assert await store.commit(StateChange(claim=claim("run-1", "call_1#0"))) is None
        found = await store.load_run("run-1")
        await store.close()
        try:
            # every connection the decision path kept between calls is back in the user's pool
            assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
            async with engine.connect() as conn:  # not disposed
                assert (await conn.exec_driver_sql("SELECT count(*) FROM claims")).scalar() == 1
        finally:
            await engine.dispose()

    assert found == (old, [claim("run-1", "call_1#0")], [])
    assert found[0] is not None and found[0].suspended_at.tzinfo == UTC
    assert found[1][0].decided_at.tzinfo == UTC


async def test_an_unreachable_server_is_storage_unavailable_until_it_is_back(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url, _proxy(url) as (proxied, outage):
        store = SQLStorage(proxied)
        try:
            await store.commit(StateChange(snapshot=snapshot("run-1")))
            async with outage():
                with pytest.raises(StorageUnavailable, match=r"127\.0\.0\.1"):
                    await store.commit(StateChange(claim=claim("run-1", "call_1#0")))
                with pytest.raises(StorageUnavailable):
                    await store.load_run("run-1")
                with pytest.raises(StorageUnavailable):
                    await store.add_approval(
                        ApprovalRecord(run_id="run-1", key="k", approver="U1", approved_at=T0)
                    )
            assert await store.commit(StateChange(claim=claim("run-1", "call_1#0"))) is None
            assert (await store.load_run("run-1"))[1] == [claim("run-1", "call_1#0")]
        finally:
            await store.close()


async def test_an_approval_waits_while_another_approval_of_the_call_is_counted(
    tmp_path: Path,
) -> None:
    # Two approvers of one call at the same moment must be counted one after the other, so the
    # N-th knows it is the N-th (and claims): countersign_add_approval takes the call's lock
    # first. Here another session holds that lock; the approval must wait for it.
    import asyncpg

    run_id = f"run-{uuid.uuid4().hex}"
    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)
        admin = await asyncpg.connect(
            os.environ[POSTGRES_ENV].replace("+asyncpg", "").split("?")[0]
        )
        try:
            await store.migrate()
            holding = admin.transaction()
            await holding.start()
            await admin.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"{run_id}#k")
            approving = asyncio.create_task(
                store.add_approval(
                    ApprovalRecord(run_id=run_id, key="k", approver="U1", approved_at=T0)
                )
            )
            waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            async with asyncio.timeout(30):
                while not await admin.fetchval(waiting):
                    assert not approving.done(), "the approval did not wait for the call's lock"
                    await asyncio.sleep(0.01)
            assert not approving.done()
            await holding.rollback()
            tally = await approving
            assert tally.added and [a.approver for a in tally.approvals] == ["U1"]
        finally:
            await admin.close()
            await store.close()


def _schema(url: str) -> str:
    schema = make_url(url).query["schema"]
    assert isinstance(schema, str)
    return schema


@contextlib.asynccontextmanager
async def _proxy(url: str) -> AsyncIterator[tuple[str, Any]]:
    """``url`` through a TCP proxy on a free port, and ``outage()``: while inside it, every
    proxied connection is cut and new ones are refused (what a stopped server does)."""
    target = make_url(url)
    links: set[asyncio.StreamWriter] = set()

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(target.host, target.port or 5432)
        links.update((writer, up_writer))
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]

    @contextlib.asynccontextmanager
    async def outage() -> AsyncIterator[None]:
        nonlocal server
        server.close()
        for writer in links:
            writer.transport.abort()
        links.clear()
        await server.wait_closed()
        try:
            yield
        finally:
            server = await asyncio.start_server(serve, "127.0.0.1", port)

    try:
        yield target.set(host="127.0.0.1", port=port).render_as_string(False), outage
    finally:
        server.close()
        for writer in links:
            writer.transport.abort()
