"""Table definitions of ``SQLStorage``, shared by the queries and the Alembic migrations.

Columns are named after the fields of the records in ``storage._records``, so
``record_values`` / ``record_from_row`` convert both ways. Timestamps go through
``UTCDateTime``: stored as UTC on every database (naive UTC text on SQLite, ``timestamptz`` on
PostgreSQL) and returned timezone-aware UTC. JSON documents use the plain ``JSON`` type
(``json``, not ``jsonb``, on PostgreSQL) so key order survives a round trip.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect, Row

from storage._records import (
    ApprovalRecord,
    AuditEvent,
    CardRecord,
    ClaimRecord,
    EscalationRecord,
    GrantRecord,
    MessageRecord,
    OutboxEntry,
    R,
    SnapshotRecord,
    ThreadRecord,
)

VERSION_TABLE = "countersign_alembic_version"
"""Alembic's bookkeeping table; named for us so a host application's own Alembic is unaffected."""

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A ``DateTime`` that only accepts aware datetimes and always returns aware UTC ones."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(
                f"naive datetime {value.isoformat()} given to storage: "
                "pass a timezone-aware one (storage.utcnow() or datetime.now(UTC))"
            )
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


_ID = sa.String(255)
_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

snapshots = sa.Table(
    "snapshots",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("agent_id", _ID, nullable=False),
    sa.Column("thread_id", _ID, nullable=True),
    sa.Column("resource_id", _ID, nullable=True),
    sa.Column("suspended_at", UTCDateTime(), nullable=False),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("data", sa.JSON(), nullable=False),
    sa.Column("decidable", sa.Boolean(), nullable=False, server_default=sa.true()),
    sa.Column("due_at", UTCDateTime(), nullable=True),  # the sweep's index (0012)
    # run_id last: listing orders by (suspended_at, run_id) straight from the index
    sa.Index(None, "agent_id", "suspended_at", "run_id"),
    sa.Index(None, "thread_id", "suspended_at", "run_id"),
    sa.Index(None, "resource_id", "suspended_at", "run_id"),
    sa.Index(None, "suspended_at", "run_id"),
    sa.Index(None, "decidable", "suspended_at", "run_id"),
    sa.Index(None, "agent_id", "due_at", "run_id"),  # list_due, by key (0012)
)

claims = sa.Table(
    "claims",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("key", _ID, primary_key=True),
    sa.Column("tool_call_id", _ID, nullable=True),
    sa.Column("decision", sa.String(64), nullable=False),
    sa.Column("decided_by", _ID, nullable=True),
    sa.Column("decided_at", UTCDateTime(), nullable=False),
    sa.Column("detail", sa.JSON(), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("outcome", sa.JSON(), nullable=True),
    sa.Column("completed_at", UTCDateTime(), nullable=True),
    sa.Column("owner", _ID, nullable=True),
    sa.Column("lease_until", UTCDateTime(), nullable=True),
    sa.Column("epoch", sa.Integer(), nullable=False, server_default="0"),  # 0008
    sa.Index(None, "status", "lease_until"),  # take_over_expired_claims
    sa.Index(None, "status", "completed_at"),  # prune
)

approvals = sa.Table(
    "approvals",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("key", _ID, primary_key=True),
    sa.Column("approver", _ID, primary_key=True),
    sa.Column("approved_at", UTCDateTime(), nullable=False),
    sa.Index(None, "approved_at"),  # prune
)

escalations = sa.Table(
    "escalations",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("key", _ID, primary_key=True),
    sa.Column("step", sa.Integer(), primary_key=True),
    sa.Column("approvers", sa.JSON(), nullable=False),
    sa.Column("notify", sa.JSON(), nullable=False),
    sa.Column("escalated_at", UTCDateTime(), nullable=False),
    sa.Index(None, "escalated_at"),  # prune
)  # 0010

threads = sa.Table(
    "threads",
    metadata,
    sa.Column("thread_id", _ID, primary_key=True),
    sa.Column("resource_id", _ID, nullable=True),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("updated_at", UTCDateTime(), nullable=False),
    sa.Column("metadata", sa.JSON(), nullable=False),
)

messages = sa.Table(
    "messages",
    metadata,
    sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
    sa.Column("id", _ID, nullable=False),
    sa.Column("thread_id", _ID, nullable=False),
    sa.Column("resource_id", _ID, nullable=True),
    sa.Column("run_id", _ID, nullable=True),
    sa.Column("role", sa.String(64), nullable=False),
    sa.Column("content", sa.JSON(), nullable=False),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Index(None, "thread_id", "seq"),
)

audit = sa.Table(
    "audit",
    metadata,
    sa.Column("seq", _SEQ, primary_key=True, autoincrement=True),
    sa.Column("id", _ID, nullable=False),
    sa.Column("at", UTCDateTime(), nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("run_id", _ID, nullable=True),
    sa.Column("tool_call_id", _ID, nullable=True),
    sa.Column("thread_id", _ID, nullable=True),
    sa.Column("agent_id", _ID, nullable=True),
    sa.Column("actor", _ID, nullable=True),
    sa.Column("source", sa.String(64), nullable=True),
    sa.Column("data", sa.JSON(), nullable=False),
    sa.Index(None, "run_id", "at"),  # a call's events are asked for with its run (0006)
    sa.Index(None, "thread_id", "at"),
    sa.Index(None, "at"),
)

kv = sa.Table(
    "kv",
    metadata,
    sa.Column("key", _ID, primary_key=True),
    sa.Column("value", sa.Text(), nullable=False),
    sa.Column("expires_at", UTCDateTime(), nullable=False),
    sa.Index(None, "expires_at"),
)

cards = sa.Table(
    "cards",
    metadata,
    sa.Column("run_id", _ID, primary_key=True),
    sa.Column("tool_call_id", _ID, primary_key=True),
    sa.Column("team", _ID, nullable=False),
    sa.Column("channel", _ID, nullable=False),
    sa.Column("ts", sa.String(64), nullable=False),
    sa.Column("thread_ts", sa.String(64), nullable=False),
    sa.Column("posted_at", UTCDateTime(), nullable=False),
    sa.Column("shown", sa.JSON(), nullable=False),
    sa.Index(None, "posted_at"),  # prune (0007)
)

outbox = sa.Table(
    "outbox",
    metadata,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("write", sa.JSON(), nullable=False),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("next_try_at", UTCDateTime(), nullable=False),
    sa.Index(None, "created_at", "id"),  # listed oldest first (0007)
)

grants = sa.Table(
    "grants",
    metadata,
    sa.Column("grant_id", _ID, primary_key=True),
    sa.Column("agent_id", _ID, nullable=False),
    sa.Column("tool_name", _ID, nullable=False),
    sa.Column("agent_path", sa.JSON(), nullable=False),
    sa.Column("thread_id", _ID, nullable=True),
    sa.Column("resource_id", _ID, nullable=True),
    sa.Column("pins", sa.JSON(), nullable=False),
    sa.Column("granted_by", _ID, nullable=False),
    sa.Column("created_at", UTCDateTime(), nullable=False),
    sa.Column("expires_at", UTCDateTime(), nullable=False),
    sa.Column("max_uses", sa.Integer(), nullable=False),
    sa.Column("uses", sa.Integer(), nullable=False),
    sa.Column("revoked_at", UTCDateTime(), nullable=True),
    sa.Column("revoked_by", _ID, nullable=True),
    sa.Column("free_args", sa.JSON(), nullable=False),
    sa.Column("run_id", _ID, nullable=True),
    sa.Column("tool_call_id", _ID, nullable=True),
    sa.Column("rule", _ID, nullable=True),  # 0011
    sa.Column("definition_digest", sa.String(64), nullable=True),  # 0011
    sa.Index(None, "thread_id"),  # the grants of a thread (0009)
    sa.Index(None, "resource_id"),  # ... of a channel (0009)
    sa.Index(None, "granted_by"),  # a person's grants (0009)
    sa.Index(None, "expires_at"),  # prune (0013)
    sa.Index(None, "agent_id", "expires_at"),  # count_grants: an agent's usable now (0013)
    sa.Index(None, "revoked_at"),  # prune: revoked before the cutoff (0013)
    sa.Index(None, "created_at"),  # prune: used up, made before the cutoff (0013)
)


def record_values(
    record: ApprovalRecord
    | AuditEvent
    | CardRecord
    | ClaimRecord
    | EscalationRecord
    | GrantRecord
    | MessageRecord
    | OutboxEntry
    | SnapshotRecord
    | ThreadRecord,
) -> dict[str, Any]:
    """Column values of a record: every table names its columns after the record's fields."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def record_from_row(cls: type[R], row: Row[Any]) -> R:
    """The record of type ``cls`` in ``row`` (extra columns such as ``seq`` are left out)."""
    columns = row._mapping
    return cls(**{f.name: columns[f.name] for f in dataclasses.fields(cls)})


def snapshot_list_queries(
    *,
    agent_id: str | None,
    thread_id: str | None,
    resource_id: str | None,
    offset: int,
    limit: int | None,
    decidable_only: bool = False,
) -> tuple[sa.Select[int], sa.Select[Any]]:
    """The COUNT and the page query of ``list_snapshots``; both can use a snapshots index."""
    where: list[sa.ColumnElement[bool]] = []
    if agent_id is not None:
        where.append(snapshots.c.agent_id == agent_id)
    if thread_id is not None:
        where.append(snapshots.c.thread_id == thread_id)
    if resource_id is not None:
        where.append(snapshots.c.resource_id == resource_id)
    if decidable_only:
        # Alone: the decidable index. With an id filter: that id's index, decidable checked on
        # its rows (``IS NOT false`` keeps SQLite from preferring the two-valued column).
        decidable = snapshots.c.decidable
        where.append(decidable.is_not(False) if where else decidable.is_(True))
    count = sa.select(sa.func.count()).select_from(snapshots).where(*where)
    page = (
        snapshots.select()
        .where(*where)
        .order_by(snapshots.c.suspended_at.desc(), snapshots.c.run_id.desc())
        .offset(max(offset, 0))
        .limit(limit)
    )
    return count, page


CLAIM_ORDER = (claims.c.decided_at, claims.c.key)
"""How a run's claims are listed: oldest decision first."""


def approvals_query(run_ids: list[str], key: str | None = None) -> sa.Select[Any]:
    """The approvals of ``run_ids`` (of one ``key`` when given), oldest first."""
    stmt = approvals.select().where(approvals.c.run_id.in_(run_ids))
    if key is not None:
        stmt = stmt.where(approvals.c.key == key)
    return stmt.order_by(approvals.c.approved_at, approvals.c.key, approvals.c.approver)


def take_over_query(owner: str, *, now: datetime, lease_until: datetime, limit: int) -> sa.Update:
    """``UPDATE claims ... RETURNING`` giving ``owner`` up to ``limit`` expired claims, each
    at the next lease epoch (the fencing token that makes the takeover final).

    PostgreSQL picks the rows ``FOR UPDATE SKIP LOCKED`` (a concurrent taker skips them, and the
    outer ``WHERE`` re-checks the lease on rows it waited for); SQLite has one writer at a time.
    Both find the candidates through the ``(status, lease_until)`` index.
    """
    expired = sa.and_(
        claims.c.status == "claimed",
        sa.or_(claims.c.lease_until.is_(None), claims.c.lease_until < now),
    )
    pick = (
        sa.select(claims.c.run_id, claims.c.key)
        .where(expired)
        .order_by(claims.c.decided_at, claims.c.run_id, claims.c.key)
        .limit(limit)
        .with_for_update(skip_locked=True)
        .cte("pick")
    )
    return (
        claims.update()
        .where(claims.c.run_id == pick.c.run_id, claims.c.key == pick.c.key, expired)
        .values(owner=owner, lease_until=lease_until, epoch=claims.c.epoch + 1)
        .returning(*claims.c)
    )
