"""``SQLStorage``'s escalation steps: the ``escalations`` table (created by ``0010``).

``escalate`` reads, in its write transaction, whether the key is claimed and which step came
last, then inserts ``ON CONFLICT DO NOTHING`` on the ``(run_id, key, step)`` primary key: of two
processes recording the same step at once, the database lets one insert it.
``load_run_and_escalations`` is the decision path's ``load_run`` with the run's steps, in the
same read (one statement on PostgreSQL: the ``countersign_load_run`` of ``0010``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._records import EscalationRecord
from storage.sql._database import SQLDatabase
from storage.sql._schema import claims, escalations, record_from_row, record_values
from storage.sql.postgres import _decision_path as _pg_hot
from storage.sql.sqlite import _decision_path as _sqlite_hot
from storage.sql.sqlite._escalations import RunWithEscalations, load_run_and_escalations


class SQLEscalations:
    """The escalation half of ``SQLStorage`` (on its ``SQLDatabase``)."""

    _db: SQLDatabase

    async def load_run_and_escalations(self, run_id: str) -> RunWithEscalations:
        sqlite = await self._db.sqlite_connection()
        if sqlite is not None:
            return await self._db.sqlite_read(sqlite, lambda c: load_run_and_escalations(c, run_id))
        postgres = await self._db.postgres()
        if postgres is not None:
            return await _pg_hot.load_run_and_escalations(postgres, run_id)

        async def in_transaction(conn: AsyncConnection) -> RunWithEscalations:
            async with conn.begin():  # SQLite: one transaction reads one snapshot
                return await conn.run_sync(
                    lambda sync: load_run_and_escalations(
                        _sqlite_hot.ThroughSQLAlchemy(sync), run_id
                    )
                )

        return await self._db.read(in_transaction)

    async def escalate(self, record: EscalationRecord) -> bool:
        claimed = sa.select(claims.c.key).where(
            claims.c.run_id == record.run_id, claims.c.key == record.key
        )
        last = sa.select(sa.func.max(escalations.c.step)).where(
            escalations.c.run_id == record.run_id, escalations.c.key == record.key
        )
        insert = self._db.insert(escalations).values(**record_values(record))
        insert = insert.on_conflict_do_nothing(
            index_elements=[escalations.c.run_id, escalations.c.key, escalations.c.step]
        )

        async def work(conn: AsyncConnection) -> bool:
            if (await conn.execute(claimed)).first() is not None:
                return False
            if ((await conn.execute(last)).scalar() or 0) != record.step - 1:
                return False
            return (await conn.execute(insert)).rowcount == 1

        return await self._db.write(work)

    async def list_escalations(self, run_ids: Sequence[str]) -> dict[str, list[EscalationRecord]]:
        found: dict[str, list[EscalationRecord]] = {run_id: [] for run_id in run_ids}
        if not found:
            return found
        stmt = (
            escalations.select()
            .where(escalations.c.run_id.in_(list(found)))
            .order_by(escalations.c.run_id, escalations.c.key, escalations.c.step)
        )

        async def work(conn: AsyncConnection) -> list[EscalationRecord]:
            rows = (await conn.execute(stmt)).all()
            return [record_from_row(EscalationRecord, row) for row in rows]

        for step in await self._db.read(work):
            found[step.run_id].append(step)
        return found
