"""``SQLStorage.commit_batch``: several decisions of one run in one transaction, all or none.

SQLite runs the statements of ``storage.sql.sqlite._decision_path.apply_batch`` in one
``BEGIN IMMEDIATE`` transaction; PostgreSQL calls the decision path's own functions
(``countersign_add_approval``, ``countersign_commit``) one after the other inside one
transaction, keys in order so two batches never wait on each other in a circle. Either way the
first refused decision rolls everything back.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from storage import _codec as codec
from storage._change import BatchRefusal, DecisionBatch, StateChange
from storage._records import ApprovalRecord, ClaimRecord
from storage.sql._database import SQLDatabase
from storage.sql.postgres import _decision_path as pg
from storage.sql.sqlite import _decision_path as sqlite_path
from storage.sql.sqlite._decision_path import Refused

T = TypeVar("T")


async def commit_batch(
    db: SQLDatabase, batch: DecisionBatch, *, durable: bool
) -> BatchRefusal | None:
    """Apply ``batch`` on ``db`` (``Storage.commit_batch``); ``durable``: synced to disk on
    SQLite when it claims anything (SPEC 3.4)."""
    durable = durable and bool(batch.claims)
    try:
        sqlite = await db.sqlite_connection()
        if sqlite is not None:
            await db.sqlite_write(
                sqlite, lambda conn: sqlite_path.apply_batch(conn, batch), durable=durable
            )
            return None
        postgres = await db.postgres()
        if postgres is not None:
            await postgres.transaction(lambda driver: _postgres(driver, batch))
            return None
        await db.write(
            through_sqlalchemy(lambda c: sqlite_path.apply_batch(c, batch)), durable=durable
        )
    except Refused as refused:
        return refused.refusal
    return None


async def _postgres(driver: Any, batch: DecisionBatch) -> None:
    """The batch's statements on one ``asyncpg`` connection inside its transaction."""
    for vote in sorted(batch.approvals, key=lambda a: a.key):
        found = json.loads(await driver.fetchval(pg.ADD_APPROVAL, json.dumps(codec.document(vote))))
        if found["added"]:
            continue
        held = found["claim"]
        claim = None if held is None else codec.from_document(ClaimRecord, held)
        raise Refused(_refusal(vote, claim))
    for record in sorted(batch.claims, key=lambda c: c.key):
        stored = await driver.fetchval(pg.COMMIT, *pg.change_arguments(StateChange(claim=record)))
        if stored is not None:
            claim = codec.from_document(ClaimRecord, json.loads(stored))
            raise Refused(BatchRefusal(run_id=record.run_id, key=record.key, claim=claim))
    if batch.audit:
        await driver.fetchval(pg.COMMIT, *pg.change_arguments(StateChange(audit=batch.audit)))


def _refusal(vote: ApprovalRecord, claim: ClaimRecord | None) -> BatchRefusal:
    approver = None if claim is not None else vote.approver
    return BatchRefusal(run_id=vote.run_id, key=vote.key, claim=claim, approver=approver)


def through_sqlalchemy(
    work: Callable[[sqlite_path.Connection], T],
) -> Callable[[AsyncConnection], Awaitable[T]]:
    """``work`` (``storage.sql.sqlite._decision_path``'s statements) on a connection SQLAlchemy
    drives."""

    async def run(conn: AsyncConnection) -> T:
        return await conn.run_sync(lambda sync: work(sqlite_path.ThroughSQLAlchemy(sync)))

    return run
