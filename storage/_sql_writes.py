"""The statements of ``SQLStorage``'s writes, each run on a connection inside a transaction.

Every protocol write (``claim``, ``save_snapshot``, ...) is one of these in its own
transaction; ``commit`` runs several of them in one (``apply``), so a whole state change of a
run costs one ``COMMIT``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._change import ApprovalTally, StateChange
from storage._errors import SnapshotVersionConflict
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage._sql_database import SQLDatabase
from storage._sql_schema import (
    approvals,
    approvals_query,
    audit,
    claims,
    messages,
    record_from_row,
    record_values,
    snapshots,
    threads,
)

# The hot statements are built once (per dialect) with bound parameters: building and hashing
# a new statement object for every write cost more than SQLite's own work.
_RUN: sa.BindParameter[str] = sa.bindparam("b_run_id")
_KEY: sa.BindParameter[str] = sa.bindparam("b_key")
_COMPLETE = (
    claims.update()
    .where(claims.c.run_id == _RUN, claims.c.key == _KEY)
    .values(
        status="completed",
        outcome=sa.bindparam("b_outcome", type_=claims.c.outcome.type),
        completed_at=sa.bindparam("b_at", type_=claims.c.completed_at.type),
    )
)
_UPDATE_SNAPSHOT = (
    snapshots.update()
    .where(snapshots.c.run_id == _RUN)
    .where(snapshots.c.version == sa.bindparam("b_previous"))
)
_DELETE_SNAPSHOT = snapshots.delete().where(snapshots.c.run_id == _RUN)
_DELETE_APPROVALS = approvals.delete().where(approvals.c.run_id == _RUN)
_CLAIM_OF_KEY = claims.select().where(claims.c.run_id == _RUN, claims.c.key == _KEY)


@functools.cache
def _insert_claim(dialect: str) -> Any:
    return (
        _dialect_insert(dialect, claims)
        .on_conflict_do_nothing(index_elements=[claims.c.run_id, claims.c.key])
        .returning(claims.c.run_id)
    )


@functools.cache
def _insert_snapshot(dialect: str) -> Any:
    return (
        _dialect_insert(dialect, snapshots)
        .on_conflict_do_nothing(index_elements=[snapshots.c.run_id])
        .returning(snapshots.c.run_id)
    )


def _dialect_insert(dialect: str, table: sa.Table) -> Any:
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)


async def apply(db: SQLDatabase, conn: AsyncConnection, change: StateChange) -> ClaimRecord | None:
    """Write ``change`` on ``conn``; the stored claim (having written nothing) on a conflict.

    Raises ``SnapshotVersionConflict`` / ``KeyError`` after some statements ran: the caller's
    transaction must roll back (``SQLDatabase.write`` does).
    """
    if change.claim is not None:
        existing = await claim(db, conn, change.claim)
        if existing is not None:
            return existing
    for done in change.completions:
        await complete(conn, done.run_id, done.key, done.outcome)
    if change.snapshot is not None:
        await save_snapshot(db, conn, change.snapshot)
    if change.delete_snapshot is not None:
        await delete_snapshot(conn, change.delete_snapshot)
    if change.thread is not None:
        await save_thread(db, conn, change.thread)
    await append_messages(conn, change.messages)
    await append_audit(conn, change.audit)
    return None


async def claim(db: SQLDatabase, conn: AsyncConnection, record: ClaimRecord) -> ClaimRecord | None:
    """Insert the claim unless its key is taken; None when inserted, else the stored one."""
    inserted = await conn.execute(_insert_claim(db.dialect), record_values(record))
    if inserted.first() is not None:
        return None
    existing = await conn.execute(_CLAIM_OF_KEY, {"b_run_id": record.run_id, "b_key": record.key})
    return record_from_row(ClaimRecord, existing.one())


async def complete(
    conn: AsyncConnection, run_id: str, key: str, outcome: dict[str, object]
) -> None:
    """Mark a claim completed; ``KeyError`` when there is none."""
    params = {"b_run_id": run_id, "b_key": key, "b_outcome": dict(outcome), "b_at": utcnow()}
    if (await conn.execute(_COMPLETE, params)).rowcount != 1:
        raise KeyError(
            f"no claim {key!r} on run {run_id!r} to complete: claim() it before completing it"
        )


async def save_snapshot(db: SQLDatabase, conn: AsyncConnection, record: SnapshotRecord) -> None:
    """Insert (version 1) or replace (the next version); ``SnapshotVersionConflict`` otherwise."""
    values = record_values(record)
    if record.version == 1:
        inserted = await conn.execute(_insert_snapshot(db.dialect), values)
        saved = inserted.first() is not None
    elif record.version > 1:
        params = {**values, "b_run_id": record.run_id, "b_previous": record.version - 1}
        saved = (await conn.execute(_UPDATE_SNAPSHOT, params)).rowcount == 1
    else:
        saved = False
    if not saved:
        raise SnapshotVersionConflict(record.run_id, record.version - 1)


async def delete_snapshot(conn: AsyncConnection, run_id: str) -> None:
    """Delete a run's snapshot and its approvals (claims stay: decisions are remembered)."""
    await conn.execute(_DELETE_SNAPSHOT, {"b_run_id": run_id})
    await conn.execute(_DELETE_APPROVALS, {"b_run_id": run_id})


async def save_thread(db: SQLDatabase, conn: AsyncConnection, record: ThreadRecord) -> None:
    """Create or replace a memory thread."""
    stmt = db.insert(threads).values(**record_values(record))
    stmt = stmt.on_conflict_do_update(
        index_elements=[threads.c.thread_id],
        set_={
            "resource_id": stmt.excluded.resource_id,
            "created_at": stmt.excluded.created_at,
            "updated_at": stmt.excluded.updated_at,
            "metadata": stmt.excluded.metadata,
        },
    )
    await conn.execute(stmt)


async def append_messages(conn: AsyncConnection, records: Sequence[MessageRecord]) -> None:
    """Insert messages in order (one executemany: the autoincrement ``seq`` keeps the order)."""
    if records:
        await conn.execute(messages.insert(), [record_values(m) for m in records])


async def append_audit(conn: AsyncConnection, events: Sequence[AuditEvent]) -> None:
    """Append audit events in order (one executemany)."""
    if events:
        await conn.execute(audit.insert(), [record_values(e) for e in events])


async def add_approval(
    db: SQLDatabase, conn: AsyncConnection, record: ApprovalRecord
) -> ApprovalTally:
    """Add one approval unless the key is claimed or this approver already approved it.

    SQLite has one writer at a time, so concurrent approvers are counted one after the other
    (each sees the ones before it: the N-th is known to be the N-th). PostgreSQL runs
    ``countersign_add_approval`` instead (``storage._pg_hot``), which serializes them with an
    advisory lock on the call.
    """
    existing = claims.select().where(claims.c.run_id == record.run_id, claims.c.key == record.key)
    row = (await conn.execute(existing)).first()
    held = None if row is None else record_from_row(ClaimRecord, row)
    added = False
    if held is None:
        stmt = (
            db.insert(approvals)
            .values(**record_values(record))
            .on_conflict_do_nothing(
                index_elements=[approvals.c.run_id, approvals.c.key, approvals.c.approver]
            )
            .returning(approvals.c.run_id)
        )
        added = (await conn.execute(stmt)).first() is not None
    rows = (await conn.execute(approvals_query([record.run_id], record.key))).all()
    found = [record_from_row(ApprovalRecord, r) for r in rows]
    return ApprovalTally(added=added, approvals=found, claim=held)
