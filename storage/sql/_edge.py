"""``SQLStorage``'s edge records: the ``cards`` and ``outbox`` tables (created by ``0007``).

A card is an upsert on its ``(run_id, tool_call_id)`` primary key, written in one transaction
with its ``presented`` audit event; taking an outbox entry is one ``UPDATE ... WHERE
next_try_at <= now RETURNING``, so two instances never take the same entry at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from storage._records import AuditEvent, CardRecord, OutboxEntry
from storage.sql._database import SQLDatabase
from storage.sql._schema import audit as audit_log
from storage.sql._schema import cards, outbox, record_from_row, record_values


class SQLEdgeRecords:
    """The card and outbox half of ``SQLStorage`` (on its ``SQLDatabase``)."""

    _db: SQLDatabase

    # -- cards -----------------------------------------------------------------------------
    async def put_card(self, record: CardRecord, *, audit: Sequence[AuditEvent] = ()) -> None:
        values = record_values(record)
        stmt = self._db.insert(cards).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[cards.c.run_id, cards.c.tool_call_id],
            set_={name: getattr(stmt.excluded, name) for name in values},
        )
        events = [record_values(event) for event in audit]

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(stmt)
            if events:
                await conn.execute(audit_log.insert(), events)

        await self._db.write(work)

    async def get_card(self, run_id: str, tool_call_id: str) -> CardRecord | None:
        stmt = cards.select().where(cards.c.run_id == run_id, cards.c.tool_call_id == tool_call_id)

        async def work(conn: AsyncConnection) -> CardRecord | None:
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(CardRecord, row)

        return await self._db.read(work)

    async def list_cards(self, run_id: str) -> list[CardRecord]:
        stmt = (
            cards.select()
            .where(cards.c.run_id == run_id)
            .order_by(cards.c.posted_at, cards.c.tool_call_id)
        )

        async def work(conn: AsyncConnection) -> list[CardRecord]:
            return [record_from_row(CardRecord, row) for row in (await conn.execute(stmt)).all()]

        return await self._db.read(work)

    async def delete_card(self, run_id: str, tool_call_id: str) -> bool:
        stmt = cards.delete().where(cards.c.run_id == run_id, cards.c.tool_call_id == tool_call_id)

        async def work(conn: AsyncConnection) -> bool:
            return (await conn.execute(stmt)).rowcount == 1

        return await self._db.write(work)

    # -- outbox ----------------------------------------------------------------------------
    async def put_outbox(self, entry: OutboxEntry) -> None:
        values = record_values(entry)
        stmt = self._db.insert(outbox).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[outbox.c.id],
            set_={name: getattr(stmt.excluded, name) for name in values if name != "id"},
        )

        async def work(conn: AsyncConnection) -> None:
            await conn.execute(stmt)

        await self._db.write(work)

    async def list_outbox(
        self, *, due_at: datetime | None = None, limit: int | None = None
    ) -> list[OutboxEntry]:
        if limit is not None and limit <= 0:
            return []
        stmt = outbox.select()
        if due_at is not None:
            stmt = stmt.where(outbox.c.next_try_at <= due_at)
        stmt = stmt.order_by(outbox.c.created_at, outbox.c.id).limit(limit)

        async def work(conn: AsyncConnection) -> list[OutboxEntry]:
            return [record_from_row(OutboxEntry, row) for row in (await conn.execute(stmt)).all()]

        return await self._db.read(work)

    async def take_outbox(
        self, entry_id: str, *, now: datetime, retry_at: datetime
    ) -> OutboxEntry | None:
        stmt = (
            outbox.update()
            .where(outbox.c.id == entry_id, outbox.c.next_try_at <= now)
            .values(attempts=outbox.c.attempts + 1, next_try_at=retry_at)
            .returning(*outbox.c)
        )

        async def work(conn: AsyncConnection) -> OutboxEntry | None:
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(OutboxEntry, row)

        return await self._db.write(work)

    async def remove_outbox(self, entry_id: str) -> bool:
        stmt = outbox.delete().where(outbox.c.id == entry_id)

        async def work(conn: AsyncConnection) -> bool:
            return (await conn.execute(stmt)).rowcount == 1

        return await self._db.write(work)
