"""``SQLStorage``'s due index: ``snapshots.due_at`` and ``ix_snapshots_agent_id_due_at_run_id``
(created by ``0012``).

``list_due`` is one range read of that index by key: ``agent_id = ? AND due_at <= until AND
(due_at, run_id) > after ORDER BY due_at, run_id LIMIT n`` (a row value comparison both SQLite
and PostgreSQL answer from the index), never an ``OFFSET`` and never a ``COUNT``: a run not due
is not read. ``reschedule`` is an ``UPDATE ... WHERE version = ?``: a snapshot saved again
meanwhile keeps the ``due_at`` its own save wrote.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._records import DueKey, SnapshotRecord
from storage.sql._database import SQLDatabase
from storage.sql._schema import record_from_row, snapshots


def due_query(
    *, agent_id: str, until: datetime, after: DueKey | None, limit: int
) -> sa.Select[Any]:
    """The page query of ``list_due`` (one index range, by key)."""
    due_at, run_id = snapshots.c.due_at, snapshots.c.run_id
    where = [snapshots.c.agent_id == agent_id, due_at <= until]  # NULL: never due
    if after is not None:
        where.append(
            sa.tuple_(due_at, run_id)
            > sa.tuple_(sa.literal(after[0], due_at.type), sa.literal(after[1], run_id.type))
        )
    return snapshots.select().where(*where).order_by(due_at, run_id).limit(max(limit, 0))


class SQLDue:
    """The due half of ``SQLStorage`` (on its ``SQLDatabase``)."""

    _db: SQLDatabase

    async def list_due(
        self,
        *,
        agent_id: str,
        until: datetime,
        after: DueKey | None = None,
        limit: int = 100,
    ) -> list[SnapshotRecord]:
        page = due_query(agent_id=agent_id, until=until, after=after, limit=limit)

        async def work(conn: AsyncConnection) -> list[SnapshotRecord]:
            rows = (await conn.execute(page)).all()
            return [record_from_row(SnapshotRecord, row) for row in rows]

        return await self._db.read(work)

    async def reschedule(self, run_id: str, *, version: int, due_at: datetime | None) -> bool:
        update = (
            snapshots.update()
            .where(
                snapshots.c.run_id == run_id,
                snapshots.c.version == version,
                snapshots.c.decidable.is_(True),
            )
            .values(due_at=due_at)
        )

        async def work(conn: AsyncConnection) -> bool:
            return (await conn.execute(update)).rowcount == 1

        return await self._db.write(work)
