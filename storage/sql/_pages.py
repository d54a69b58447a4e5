"""``SQLStorage``'s ``page_snapshots``: an agent's runs, page by page, by key.

One range read of ``ix_snapshots_agent_id_suspended_at_run_id`` walked backwards:
``agent_id = ? AND (suspended_at, run_id) < after ORDER BY suspended_at DESC, run_id DESC
LIMIT n`` (a row value comparison both SQLite and PostgreSQL answer from the index), in
``list_snapshots``'s order; never an ``OFFSET`` and never a ``COUNT``.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._records import SnapshotKey, SnapshotRecord
from storage.sql._database import SQLDatabase
from storage.sql._schema import record_from_row, snapshots


def page_query(*, agent_id: str, after: SnapshotKey | None, limit: int) -> sa.Select[Any]:
    """The query of ``page_snapshots`` (one index range, by key)."""
    suspended_at, run_id = snapshots.c.suspended_at, snapshots.c.run_id
    where = [snapshots.c.agent_id == agent_id]
    if after is not None:
        where.append(
            sa.tuple_(suspended_at, run_id)
            < sa.tuple_(sa.literal(after[0], suspended_at.type), sa.literal(after[1], run_id.type))
        )
    return (
        snapshots.select()
        .where(*where)
        .order_by(suspended_at.desc(), run_id.desc())
        .limit(max(limit, 0))
    )


class SQLPages:
    """The ``page_snapshots`` of ``SQLStorage`` (on its ``SQLDatabase``)."""

    _db: SQLDatabase

    async def page_snapshots(
        self, *, agent_id: str, after: SnapshotKey | None = None, limit: int = 100
    ) -> list[SnapshotRecord]:
        page = page_query(agent_id=agent_id, after=after, limit=limit)

        async def work(conn: AsyncConnection) -> list[SnapshotRecord]:
            rows = (await conn.execute(page)).all()
            return [record_from_row(SnapshotRecord, row) for row in rows]

        return await self._db.read(work)
