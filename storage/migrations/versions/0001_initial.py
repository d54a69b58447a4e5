"""Initial schema: snapshots, claims, threads, messages, audit, kv.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)
_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _ts(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("agent_id", _ID, nullable=False),
        sa.Column("thread_id", _ID, nullable=True),
        sa.Column("resource_id", _ID, nullable=True),
        _ts("suspended_at"),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_snapshots"),
    )
    op.create_index("ix_snapshots_agent_id_suspended_at", "snapshots", ["agent_id", "suspended_at"])
    op.create_index(
        "ix_snapshots_thread_id_suspended_at", "snapshots", ["thread_id", "suspended_at"]
    )
    op.create_index(
        "ix_snapshots_resource_id_suspended_at", "snapshots", ["resource_id", "suspended_at"]
    )
    op.create_index("ix_snapshots_suspended_at", "snapshots", ["suspended_at"])

    op.create_table(
        "claims",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("key", _ID, nullable=False),
        sa.Column("tool_call_id", _ID, nullable=True),
        sa.Column("decision", sa.String(64), nullable=False),
        sa.Column("decided_by", _ID, nullable=True),
        _ts("decided_at"),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("outcome", sa.JSON(), nullable=True),
        _ts("completed_at", nullable=True),
        sa.PrimaryKeyConstraint("run_id", "key", name="pk_claims"),
    )
    op.create_index("ix_claims_status_decided_at", "claims", ["status", "decided_at"])

    op.create_table(
        "threads",
        sa.Column("thread_id", _ID, nullable=False),
        sa.Column("resource_id", _ID, nullable=True),
        _ts("created_at"),
        _ts("updated_at"),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("thread_id", name="pk_threads"),
    )

    op.create_table(
        "messages",
        sa.Column("seq", _SEQ, autoincrement=True, nullable=False),
        sa.Column("id", _ID, nullable=False),
        sa.Column("thread_id", _ID, nullable=False),
        sa.Column("resource_id", _ID, nullable=True),
        sa.Column("run_id", _ID, nullable=True),
        sa.Column("role", sa.String(64), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("seq", name="pk_messages"),
    )
    op.create_index("ix_messages_thread_id_seq", "messages", ["thread_id", "seq"])

    op.create_table(
        "audit",
        sa.Column("seq", _SEQ, autoincrement=True, nullable=False),
        sa.Column("id", _ID, nullable=False),
        _ts("at"),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("run_id", _ID, nullable=True),
        sa.Column("tool_call_id", _ID, nullable=True),
        sa.Column("thread_id", _ID, nullable=True),
        sa.Column("agent_id", _ID, nullable=True),
        sa.Column("actor", _ID, nullable=True),
        sa.Column("source", sa.String(64), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_audit"),
    )
    op.create_index("ix_audit_run_id_at", "audit", ["run_id", "at"])
    op.create_index("ix_audit_tool_call_id_at", "audit", ["tool_call_id", "at"])
    op.create_index("ix_audit_thread_id_at", "audit", ["thread_id", "at"])
    op.create_index("ix_audit_at", "audit", ["at"])

    op.create_table(
        "kv",
        sa.Column("key", _ID, nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        _ts("expires_at"),
        sa.PrimaryKeyConstraint("key", name="pk_kv"),
    )
    op.create_index("ix_kv_expires_at", "kv", ["expires_at"])


def downgrade() -> None:
    for table in ("kv", "audit", "messages", "threads", "claims", "snapshots"):
        op.drop_table(table)
