"""A page of ``page_snapshots`` costs its own rows on SQL (issue 35): one statement, no
``COUNT``, no ``OFFSET``, read in order from an index (on SQLite
``ix_snapshots_agent_id_suspended_at_run_id``), so a page deep into 10,000 stored runs costs what
the second page costs (counted at the database: SQLite's virtual machine steps; the rows
PostgreSQL's executor read). Under an offset the deep page would step over every run before it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.dialects import sqlite

from storage import SnapshotKey, SQLStorage
from storage.sql._pages import page_query
from storage.sql._schema import record_values, snapshots
from tests.backends import POSTGRES_ENV, unique_url
from tests.storage.records import snapshot

STORED = 10_000
PAGE = 200
_INDEX = "ix_snapshots_agent_id_suspended_at_run_id"
_ORDERED = {_INDEX, "ix_snapshots_suspended_at_run_id"}
"""The indexes in the page's order: PostgreSQL's planner picks either, as its statistics say."""


async def _store_runs(store: SQLStorage, count: int) -> None:
    """``count`` runs of ``ops``, five to a suspended_at, and as many of ``billing`` beside
    them (one transaction)."""
    rows = [
        record_values(snapshot(f"{prefix}{n:05d}", second=n // 5, agent_id=agent))
        for n in range(count)
        for prefix, agent in (("r", "ops"), ("b", "billing"))
    ]
    async with store.engine.begin() as conn:
        await conn.execute(snapshots.insert(), rows)


def _selects(store: SQLStorage) -> list[tuple[str, Any]]:
    """Every ``SELECT`` the store's engine runs from now on, with its parameters."""
    seen: list[tuple[str, Any]] = []

    def before(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append((statement, parameters))

    event.listen(store.engine.sync_engine, "before_cursor_execute", before)
    return seen


def _sqlite_steps(store: SQLStorage) -> Callable[[], int]:
    """Count every virtual machine step SQLite runs on the store's connections from now on."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.driver_connection.sqlite3_connection.set_progress_handler(step, 1)

    event.listen(store.engine.sync_engine, "connect", on_connect)
    return lambda: steps[0]


async def test_a_page_deep_in_10_000_runs_costs_what_the_first_costs_on_sqlite(
    tmp_path: Path,
) -> None:
    async with unique_url("sqlite", tmp_path) as url:
        store = SQLStorage(url)
        steps = _sqlite_steps(store)  # before its first connection
        try:
            await store.migrate()
            await _store_runs(store, STORED)
            selects = _selects(store)
            first = await store.page_snapshots(agent_id="ops", limit=PAGE)
            costs: list[int] = []
            for depth in (PAGE, STORED - PAGE):  # the second page, and one 9,800 runs deep
                key = (await store.page_snapshots(agent_id="ops", limit=depth))[-1]
                start = steps()
                page = await store.page_snapshots(
                    agent_id="ops", after=(key.suspended_at, key.run_id), limit=PAGE
                )
                costs.append(steps() - start)
        finally:
            await store.close()

    assert [s.run_id for s in first][:2] == ["r09999", "r09998"]
    assert [s.run_id for s in page] == [f"r{n:05d}" for n in range(PAGE - 1, -1, -1)]
    assert len(selects) == 5  # one statement a page, no count
    assert not [sql for sql, _ in selects if "count(" in sql.lower()]
    assert {params[-1] for _, params in selects} == {0}  # SQLite's LIMIT ? OFFSET 0
    # the same steps 200 or 9,800 runs deep (an offset steps over every row before the page)
    shallow, deep = costs
    assert 0 < deep == shallow < STORED


@pytest.mark.parametrize("after", [None, (snapshot("r", second=9).suspended_at, "r00045")])
async def test_the_page_query_searches_the_agent_index_in_order(
    tmp_path: Path, after: tuple[Any, str] | None
) -> None:
    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'plans.db'}")
    query = page_query(agent_id="ops", after=after, limit=PAGE)
    compiled = str(query.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))
    try:
        await store.migrate()
        async with store.engine.connect() as conn:
            plan = (await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}")).all()
    finally:
        await store.close()

    details = " | ".join(str(row[-1]) for row in plan)
    assert f"SEARCH snapshots USING INDEX {_INDEX} (agent_id=?" in details, details
    assert "TEMP B-TREE" not in details, details  # ordered by the index itself
    assert "OFFSET 0" in compiled and "count(" not in compiled.lower()


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


async def _rows_read(store: SQLStorage, after: SnapshotKey) -> tuple[set[str], int]:
    """The plan nodes of the page after ``after`` and the rows its index scan touched (PostgreSQL's
    own count: rows returned and rows filtered out)."""
    query = page_query(agent_id="ops", after=after, limit=PAGE)
    compiled = query.compile(dialect=store.engine.dialect, compile_kwargs={"literal_binds": True})
    async with store.engine.connect() as conn:
        explained = (
            await conn.exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {compiled}")
        ).scalar_one()
    plan = json.loads(explained) if isinstance(explained, str) else explained
    nodes = list(_nodes(plan[0]["Plan"]))
    scans = [n for n in nodes if "Index Name" in n]
    assert len(scans) == 1 and scans[0]["Index Name"] in _ORDERED, nodes
    touched = scans[0]["Actual Rows"] + scans[0].get("Rows Removed by Filter", 0)
    return {n["Node Type"] for n in nodes}, touched


@pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"{POSTGRES_ENV} unset")
async def test_a_page_deep_in_10_000_runs_reads_what_the_second_page_reads_on_postgres(
    tmp_path: Path,
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store = SQLStorage(url)
        try:
            await store.migrate()
            await _store_runs(store, STORED)
            async with store.engine.connect() as conn:
                await conn.execute(text("ANALYZE snapshots"))  # as autovacuum would have by now
                await conn.commit()
            found: list[tuple[set[str], int]] = []
            for depth in (PAGE, STORED // 2):  # the second page, and one 5,000 runs deep
                key = (await store.page_snapshots(agent_id="ops", limit=depth))[-1]
                after = (key.suspended_at, key.run_id)
                selects = _selects(store)
                page = await store.page_snapshots(agent_id="ops", after=after, limit=PAGE)
                [(sql, _)] = selects  # one statement
                found.append(await _rows_read(store, after))
        finally:
            await store.close()

    middle = STORED // 2
    assert [s.run_id for s in page] == [
        f"r{n:05d}" for n in range(middle - 1, middle - PAGE - 1, -1)
    ]
    assert "count(" not in sql.lower() and "offset" not in sql.lower()
    (second_nodes, second), (deep_nodes, deep) = found
    assert second_nodes == deep_nodes == {"Limit", "Index Scan"}  # in the index's order: no sort
    # the page's rows (and billing's beside them, by the all-runs index), never the 5,000 before
    assert PAGE <= deep == second <= 2 * PAGE
