"""SQLite answers ``list_snapshots`` from an index, never by scanning every snapshot."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.dialects import sqlite

from storage import SQLStorage
from storage.sql._schema import snapshot_list_queries

_ALL = "ix_snapshots_suspended_at_run_id"
_DECIDABLE = "ix_snapshots_decidable_suspended_at_run_id"
_DUE = "ix_snapshots_agent_id_due_at_run_id"


@pytest.mark.parametrize(
    ("filters", "indexes"),
    [
        # an unfiltered COUNT may read either index: both hold every snapshot
        ({}, {_ALL, _DECIDABLE}),
        ({"decidable_only": True}, {_DECIDABLE}),
        # a COUNT of an agent's runs may read either index that starts with agent_id
        ({"agent_id": "ops"}, {"ix_snapshots_agent_id_suspended_at_run_id", _DUE}),
        ({"thread_id": "T1"}, {"ix_snapshots_thread_id_suspended_at_run_id"}),
        (
            {"thread_id": "T1", "decidable_only": True},
            {"ix_snapshots_thread_id_suspended_at_run_id"},
        ),
        ({"resource_id": "U1"}, {"ix_snapshots_resource_id_suspended_at_run_id"}),
    ],
)
async def test_count_and_page_use_an_index(
    tmp_path: Path, filters: dict[str, Any], indexes: set[str]
) -> None:
    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'plans.db'}")
    try:
        await store.migrate()
        ids: dict[str, str | None] = {"agent_id": None, "thread_id": None, "resource_id": None}
        queries = snapshot_list_queries(**{**ids, **filters}, offset=40, limit=20)
        async with store.engine.connect() as conn:
            for query in queries:
                compiled = query.compile(
                    dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}
                )
                plan = (await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}")).all()
                details = " | ".join(str(row[-1]) for row in plan)
                assert any(index in details for index in indexes), details
                assert "TEMP B-TREE" not in details, details  # ordered by the index itself
    finally:
        await store.close()


class _Planner:
    """A connection stand-in that records SQLite's plan of each statement, then runs it."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.plans: list[str] = []

    async def execute(self, stmt: Any) -> Any:
        sql = str(stmt.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True}))
        rows = (await self.conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}")).all()
        self.plans.append(" | ".join(str(row[-1]) for row in rows))
        return await self.conn.execute(stmt)


async def test_every_prune_statement_searches_an_index(tmp_path: Path) -> None:
    from storage import utcnow
    from storage.sql._prune import prune

    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'plans.db'}")
    try:
        await store.migrate()
        planners: list[_Planner] = []

        async def work(conn: Any) -> object:
            planners.append(_Planner(conn))
            return await prune(planners[0], before=utcnow(), audit_too=True)

        await store._db.write(work)
    finally:
        await store.close()

    plans = planners[0].plans
    assert len(plans) == 11  # approvals, snapshots, approvals, claims, cards, escalations,
    # audit, kv, grants expired, revoked, used up
    assert [p for p in plans if "SCAN" in p] == []


@pytest.mark.parametrize("after", [None, (datetime(2026, 1, 1, tzinfo=UTC), "run-9")])
async def test_list_due_reads_one_range_of_the_due_index_by_key(
    tmp_path: Path, after: tuple[datetime, str] | None
) -> None:
    from storage.sql._due import due_query

    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'plans.db'}")
    try:
        await store.migrate()
        query = due_query(agent_id="ops", until=datetime.now(UTC), after=after, limit=100)
        compiled = query.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
        async with store.engine.connect() as conn:
            plan = (await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}")).all()
    finally:
        await store.close()

    details = " | ".join(str(row[-1]) for row in plan)
    assert f"SEARCH snapshots USING INDEX {_DUE} (agent_id=? AND " in details, details
    assert "TEMP B-TREE" not in details, details  # ordered by the index itself
    assert "OFFSET 0" in str(compiled) and "count(" not in str(compiled).lower()  # never more
