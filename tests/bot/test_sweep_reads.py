"""A sweep pass reads what is due and nothing else (issue 35): 10,000 pending runs not due yet
cost it nothing, counted at the database (SQLite's virtual machine steps over a whole pass;
the rows PostgreSQL's executor read for the pass's due query)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from agents.models import call, reply
from bot.background import sweep
from storage import SnapshotRecord, SQLStorage, utcnow
from storage.sql._schema import record_values, snapshots
from tests.backends import POSTGRES_ENV, unique_url
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

IDLE = 10_000


async def _add_idle_runs(
    store: SQLStorage, record: SnapshotRecord, count: int, first: int = 0
) -> None:
    """``count`` more pending runs like ``record``, none due for an hour (one transaction)."""
    later = utcnow() + timedelta(hours=1)
    rows = [
        record_values(
            dataclasses.replace(
                record, run_id=f"idle-{n:05d}", due_at=later + timedelta(microseconds=n)
            )
        )
        for n in range(first, first + count)
    ]
    async with store.engine.begin() as conn:
        await conn.execute(snapshots.insert(), rows)


@asynccontextmanager
async def _bot_with_one_pending(
    url: str, slack: FakeSlackAPI, executions: Executions, store: SQLStorage | None = None
) -> AsyncIterator[tuple[SQLStorage, Bot]]:
    store = store or SQLStorage(url)
    agent, _ = make_agent([call("delete_record", {"id": "x"}), reply("Done.")], executions)
    try:
        async with start_bot(slack, agent, store) as bot:
            await bot.mention("delete x")
            await bot.settle()
            yield store, bot
    finally:
        await store.close()


def _count_sqlite_steps(store: SQLStorage) -> Callable[[], int]:
    """Count every virtual machine step SQLite runs on the store's connections from now on."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.driver_connection.sqlite3_connection.set_progress_handler(step, 1)

    event.listen(store.engine.sync_engine, "connect", on_connect)
    return lambda: steps[0]


async def test_a_pass_over_10_000_runs_not_due_reads_none_of_them_on_sqlite(
    slack: FakeSlackAPI, executions: Executions, tmp_path: Path
) -> None:
    async with unique_url("sqlite", tmp_path) as url:
        counted = SQLStorage(url)
        steps = _count_sqlite_steps(counted)  # before its first connection
        async with _bot_with_one_pending(url, slack, executions, counted) as (store, bot):
            [run] = (await store.list_snapshots())[0]
            assert run.due_at is not None
            before_due = run.due_at - timedelta(seconds=1)

            await _add_idle_runs(store, run, 10)
            start = steps()
            small = await sweep(bot.services, now=before_due)
            with_ten = steps() - start

            await _add_idle_runs(store, run, IDLE - 10, first=10)
            start = steps()
            big = await sweep(bot.services, now=before_due)
            with_ten_thousand = steps() - start

            assert small == big and big.next_due == run.due_at  # the one run, read for the time
            # the same work whether 10 or 10,000 runs wait: none of them is read (a scan of
            # them, or an OFFSET past them, is at least one step per row)
            assert 0 < with_ten_thousand == with_ten
            assert with_ten_thousand < IDLE


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset")
async def test_the_due_read_over_10_000_runs_not_due_reads_none_of_them_on_postgres(
    slack: FakeSlackAPI, executions: Executions, tmp_path: Path
) -> None:
    from storage.sql._due import due_query

    async with (
        unique_url("postgres", tmp_path) as url,
        _bot_with_one_pending(url, slack, executions) as (store, bot),
    ):
        [run] = (await store.list_snapshots())[0]
        assert run.due_at is not None
        await _add_idle_runs(store, run, IDLE)
        now = run.due_at - timedelta(seconds=1)
        swept = await sweep(bot.services, now=now)
        query = due_query(agent_id="ops", until=now, after=None, limit=100)
        compiled = query.compile(
            dialect=store.engine.dialect, compile_kwargs={"literal_binds": True}
        )
        async with store.engine.connect() as conn:
            await conn.execute(text("ANALYZE snapshots"))  # as autovacuum would have by now
            explained = (
                await conn.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {compiled}")
            ).scalar_one()
    plan = json.loads(explained) if isinstance(explained, str) else explained

    assert swept.next_due == run.due_at  # the one run, read for the time
    nodes = list(_nodes(plan[0]["Plan"]))
    # PostgreSQL's own count of the rows it read: none of the 10,000, from the due index
    assert [n["Index Name"] for n in nodes if "Index Name" in n] == [
        "ix_snapshots_agent_id_due_at_run_id"
    ]
    assert {n["Node Type"] for n in nodes} <= {"Limit", "Index Scan"}
    assert [(n["Actual Rows"], n.get("Rows Removed by Filter", 0)) for n in nodes] == [
        (0, 0)
    ] * len(nodes)


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _nodes(child)
