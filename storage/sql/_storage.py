"""``SQLStorage``: the protocol on SQLAlchemy's async engine (SQLite via aiosqlite, PostgreSQL).

Atomicity comes from the database: a claim is an ``INSERT ... ON CONFLICT DO NOTHING`` on the
``(run_id, key)`` primary key, a snapshot update is ``UPDATE ... WHERE version = expected`` with a
row-count check, ``add_if_absent`` an upsert that only overwrites an expired value, ``commit``
the statements of a whole state change in one transaction. Every write of a run's state is a
``commit``. The decision path (``commit``, ``load_run``, ``add_approval``) skips SQLAlchemy's
statement pipeline: on SQLite it runs on the ``sqlite3`` driver
(``storage.sql.sqlite._decision_path``), on
PostgreSQL it is one statement calling a function of the schema
(``storage.sql.postgres._decision_path``). The
schema is migrated by Alembic on first use (see ``storage.sql._migrate``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from storage._change import ApprovalTally, BatchRefusal, Completion, DecisionBatch, StateChange
from storage._errors import SnapshotVersionConflict
from storage._prune import PruneReport
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage.sql._batch import commit_batch, through_sqlalchemy
from storage.sql._database import SQLDatabase
from storage.sql._due import SQLDue
from storage.sql._edge import SQLEdgeRecords
from storage.sql._escalations import SQLEscalations
from storage.sql._grants import SQLGrants
from storage.sql._pages import SQLPages
from storage.sql._prune import prune
from storage.sql._schema import (
    CLAIM_ORDER,
    approvals_query,
    audit,
    claims,
    kv,
    messages,
    record_from_row,
    snapshot_list_queries,
    snapshots,
    take_over_query,
    threads,
)
from storage.sql.postgres import _decision_path as _pg_hot
from storage.sql.sqlite import _decision_path as _sqlite_hot
from storage.sql.sqlite import _grants as _sqlite_grants
from storage.sql.sqlite._decision_path import RunState

_KV_PURGE_EVERY_SECONDS = 60.0


class SQLStorage(SQLEdgeRecords, SQLEscalations, SQLGrants, SQLDue, SQLPages):
    """Storage in a SQL database; ``sqlite+aiosqlite://`` and ``postgresql+asyncpg://`` URLs.

    Give it a URL (it creates, and on ``close`` disposes, its engine) or an ``AsyncEngine``
    you own (it never disposes that one, nor changes its settings). The schema is migrated on
    first use. Several processes may share one SQLite file when each opens it by URL: only
    engines made here get WAL, the busy timeout and ``BEGIN IMMEDIATE`` writes.

    Example:
        >>> store = SQLStorage("sqlite+aiosqlite:///./data/countersign.db")
    """

    def __init__(
        self, url_or_engine: str | URL | AsyncEngine, *, durable_claims: bool = True
    ) -> None:
        self._db = SQLDatabase(url_or_engine)
        self._durable_claims = durable_claims
        """SQLite: a transaction that takes a claim (and so lets a tool run) is synced to disk
        before it returns, so an OS crash or power loss after the tool ran cannot forget the
        claim and re-open the approval (SPEC 3.4). False only to compare with peers that run
        every write at ``synchronous = NORMAL`` (the benchmarks)."""
        self._next_kv_purge = 0.0

    @property
    def engine(self) -> AsyncEngine:
        """The engine this storage runs on."""
        return self._db.engine

    async def migrate(self) -> str | None:
        """Apply pending migrations now (first use does it anyway); return the revision.

        Raises ``StorageConfigError`` when the database cannot be reached.
        """
        return await self._db.migrate()

    async def close(self) -> None:
        await self._db.close()

    # -- state changes ---------------------------------------------------------------------
    async def commit(self, change: StateChange) -> ClaimRecord | None:
        durable = (  # a claim that lets something run; not one that leases a run's answer
            self._durable_claims
            and change.claim is not None
            and change.claim.decision != "continued"
        )
        sqlite = await self._db.sqlite_connection()
        if sqlite is not None:
            return await self._db.sqlite_write(
                sqlite, lambda conn: _sqlite_grants.apply(conn, change), durable=durable
            )
        postgres = await self._db.postgres()
        if postgres is not None and (change.grant or change.grant_uses or change.claims):
            return await self._commit_with_grant_on_postgres(change)
        if postgres is not None:
            return await _pg_hot.apply(postgres, change)
        return await self._db.write(
            through_sqlalchemy(lambda c: _sqlite_grants.apply(c, change)), durable=durable
        )

    async def commit_batch(self, batch: DecisionBatch) -> BatchRefusal | None:
        return await commit_batch(self._db, batch, durable=self._durable_claims)

    async def load_run(self, run_id: str) -> RunState:
        sqlite = await self._db.sqlite_connection()
        if sqlite is not None:
            return await self._db.sqlite_read(sqlite, lambda c: _sqlite_hot.load_run(c, run_id))
        postgres = await self._db.postgres()
        if postgres is not None:
            return await _pg_hot.load_run(postgres, run_id)
        work = through_sqlalchemy(lambda c: _sqlite_hot.load_run(c, run_id))

        async def in_transaction(conn: AsyncConnection) -> RunState:
            async with conn.begin():  # SQLite: one transaction reads one snapshot
                return await work(conn)

        return await self._db.read(in_transaction)

    async def _consistent(self, conn: AsyncConnection) -> AsyncConnection:
        """``conn`` reading one snapshot of the database for a whole transaction."""
        if self._db.dialect == "postgresql":  # SQLite: one transaction reads one snapshot anyway
            return await conn.execution_options(isolation_level="REPEATABLE READ")
        return conn

    # -- snapshots -------------------------------------------------------------------------
    async def save_snapshot(self, record: SnapshotRecord) -> None:
        if record.version < 1:
            raise SnapshotVersionConflict(record.run_id, record.version - 1)
        await self.commit(StateChange(snapshot=record))

    async def load_snapshot(self, run_id: str) -> SnapshotRecord | None:
        async def work(conn: AsyncConnection) -> SnapshotRecord | None:
            stmt = snapshots.select().where(snapshots.c.run_id == run_id)
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(SnapshotRecord, row)

        return await self._db.read(work)

    async def delete_snapshot(self, run_id: str) -> None:
        await self.commit(StateChange(delete_snapshot=run_id))

    async def list_snapshots(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        decidable_only: bool = False,
    ) -> tuple[list[SnapshotRecord], int]:
        count, page = snapshot_list_queries(
            agent_id=agent_id,
            thread_id=thread_id,
            resource_id=resource_id,
            offset=offset,
            limit=limit,
            decidable_only=decidable_only,
        )

        async def work(conn: AsyncConnection) -> tuple[list[SnapshotRecord], int]:
            conn = await self._consistent(conn)  # count and page from one snapshot of the table
            async with conn.begin():
                total = (await conn.execute(count)).scalar_one()
                if limit is not None and limit <= 0:
                    return [], total
                rows = (await conn.execute(page)).all()
            return [record_from_row(SnapshotRecord, row) for row in rows], total

        return await self._db.read(work)

    # -- claims ----------------------------------------------------------------------------
    async def claim(self, record: ClaimRecord) -> ClaimRecord | None:
        return await self.commit(StateChange(claim=record))

    async def complete_claim(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        await self.commit(
            StateChange(completions=[Completion(run_id=run_id, key=key, outcome=outcome)])
        )

    async def list_claims(self, run_id: str) -> list[ClaimRecord]:
        stmt = claims.select().where(claims.c.run_id == run_id).order_by(*CLAIM_ORDER)
        return await self._db.read(lambda conn: self._claims(conn, stmt))

    async def list_claims_of_runs(self, run_ids: Sequence[str]) -> dict[str, list[ClaimRecord]]:
        found: dict[str, list[ClaimRecord]] = {run_id: [] for run_id in run_ids}
        if not found:
            return found
        stmt = claims.select().where(claims.c.run_id.in_(list(found))).order_by(*CLAIM_ORDER)
        for claim in await self._db.read(lambda conn: self._claims(conn, stmt)):
            found[claim.run_id].append(claim)
        return found

    async def list_unfinished_claims(self, claimed_before: datetime) -> list[ClaimRecord]:
        stmt = (
            claims.select()
            .where(claims.c.status == "claimed", claims.c.decided_at < claimed_before)
            .order_by(claims.c.decided_at, claims.c.run_id, claims.c.key)
        )
        return await self._db.read(lambda conn: self._claims(conn, stmt))

    async def renew_lease(
        self, run_id: str, key: str, owner: str, lease_until: datetime, *, epoch: int = 0
    ) -> bool:
        stmt = (  # the fence is in the statement that writes
            claims.update()
            .where(claims.c.run_id == run_id, claims.c.key == key)
            .where(claims.c.owner == owner, claims.c.epoch == epoch)
            .where(claims.c.status == "claimed")
            .values(lease_until=lease_until)
        )

        async def work(conn: AsyncConnection) -> bool:
            return (await conn.execute(stmt)).rowcount == 1

        return await self._db.write(work)

    async def take_over_expired_claims(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[ClaimRecord]:
        if limit <= 0:
            return []
        stmt = take_over_query(owner, now=now, lease_until=lease_until, limit=limit)

        async def work(conn: AsyncConnection) -> list[ClaimRecord]:
            rows = (await conn.execute(stmt)).all()
            return [record_from_row(ClaimRecord, row) for row in rows]

        taken = await self._db.write(work)
        return sorted(taken, key=lambda c: (c.decided_at, c.run_id, c.key))

    @staticmethod
    async def _claims(conn: AsyncConnection, stmt: sa.Select[Any]) -> list[ClaimRecord]:
        return [record_from_row(ClaimRecord, row) for row in (await conn.execute(stmt)).all()]

    # -- approvals -------------------------------------------------------------------------
    async def add_approval(self, record: ApprovalRecord) -> ApprovalTally:
        sqlite = await self._db.sqlite_connection()
        if sqlite is not None:
            return await self._db.sqlite_write(
                sqlite, lambda conn: _sqlite_hot.add_approval(conn, record)
            )
        postgres = await self._db.postgres()
        if postgres is not None:
            return await _pg_hot.add_approval(postgres, record)
        return await self._db.write(
            through_sqlalchemy(lambda c: _sqlite_hot.add_approval(c, record))
        )

    async def list_approvals(self, run_ids: Sequence[str]) -> dict[str, list[ApprovalRecord]]:
        found: dict[str, list[ApprovalRecord]] = {run_id: [] for run_id in run_ids}
        if not found:
            return found
        stmt = approvals_query(list(found))

        async def work(conn: AsyncConnection) -> list[ApprovalRecord]:
            rows = (await conn.execute(stmt)).all()
            return [record_from_row(ApprovalRecord, row) for row in rows]

        for approval in await self._db.read(work):
            found[approval.run_id].append(approval)
        return found

    # -- memory ----------------------------------------------------------------------------
    async def save_thread(self, record: ThreadRecord) -> None:
        await self.commit(StateChange(thread=record))

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        async def work(conn: AsyncConnection) -> ThreadRecord | None:
            stmt = threads.select().where(threads.c.thread_id == thread_id)
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(ThreadRecord, row)

        return await self._db.read(work)

    async def append_messages(self, records: Sequence[MessageRecord]) -> None:
        if records:
            await self.commit(StateChange(messages=records))

    async def list_messages(
        self, thread_id: str, *, limit: int | None = None, exclude_run_id: str | None = None
    ) -> list[MessageRecord]:
        if limit is not None and limit <= 0:
            return []
        stmt = messages.select().where(messages.c.thread_id == thread_id)
        if exclude_run_id is not None:
            stmt = stmt.where(
                sa.or_(messages.c.run_id.is_(None), messages.c.run_id != exclude_run_id)
            )
        stmt = stmt.order_by(messages.c.seq.desc()).limit(limit)

        async def work(conn: AsyncConnection) -> list[MessageRecord]:
            rows = (await conn.execute(stmt)).all()
            return [record_from_row(MessageRecord, row) for row in reversed(rows)]

        return await self._db.read(work)

    # -- audit -----------------------------------------------------------------------------
    async def append_audit(self, event: AuditEvent) -> None:
        await self.commit(StateChange(audit=[event]))

    async def query_audit(
        self,
        *,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        thread_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[AuditEvent]:
        if limit is not None and limit <= 0:
            return []
        stmt = audit.select()
        if run_id is not None:
            stmt = stmt.where(audit.c.run_id == run_id)
        if tool_call_id is not None:
            stmt = stmt.where(audit.c.tool_call_id == tool_call_id)
        if thread_id is not None:
            stmt = stmt.where(audit.c.thread_id == thread_id)
        if since is not None:
            stmt = stmt.where(audit.c.at >= since)
        if until is not None:
            stmt = stmt.where(audit.c.at < until)
        stmt = stmt.order_by(audit.c.at, audit.c.seq).limit(limit)

        async def work(conn: AsyncConnection) -> list[AuditEvent]:
            rows = (await conn.execute(stmt)).all()
            return [record_from_row(AuditEvent, row) for row in rows]

        return await self._db.read(work)

    # -- key → value -----------------------------------------------------------------------
    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        now = utcnow()
        stmt = self._db.insert(kv).values(
            key=key, value=value, expires_at=now + timedelta(seconds=ttl_seconds)
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=[kv.c.key],
            set_={"value": stmt.excluded.value, "expires_at": stmt.excluded.expires_at},
            where=kv.c.expires_at <= now,
        ).returning(kv.c.key)
        purge = time.monotonic() >= self._next_kv_purge
        if purge:
            self._next_kv_purge = time.monotonic() + _KV_PURGE_EVERY_SECONDS

        async def work(conn: AsyncConnection) -> bool:
            if purge:
                await conn.execute(kv.delete().where(kv.c.expires_at <= now))
            return (await conn.execute(stmt)).first() is not None

        return await self._db.write(work)

    async def get_value(self, key: str) -> str | None:
        stmt = sa.select(kv.c.value).where(kv.c.key == key, kv.c.expires_at > utcnow())

        async def work(conn: AsyncConnection) -> str | None:
            found: str | None = (await conn.execute(stmt)).scalar_one_or_none()
            return found

        return await self._db.read(work)

    async def delete_value(self, key: str) -> None:
        async def work(conn: AsyncConnection) -> None:
            await conn.execute(kv.delete().where(kv.c.key == key))

        await self._db.write(work)

    # -- retention -------------------------------------------------------------------------
    async def prune(self, *, before: datetime, audit: bool = False) -> PruneReport:
        return await self._db.write(lambda conn: prune(conn, before=before, audit_too=audit))
