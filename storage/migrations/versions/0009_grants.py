"""Standing grants (SPEC 15): the ``grants`` table, one row per grant.

A grant is inserted in the transaction of the approval that creates it, and its ``uses`` is
counted in the transaction of each claim it approves (``UPDATE ... WHERE uses < max_uses AND
expires_at > now AND revoked_at IS NULL``), so the use past ``max_uses`` does not happen. Indexed
by thread, by resource and by grantor (the listings a thread's calls, a channel and a person's
Home tab make).

Downgrade drops the table (grants are standing approvals only: nothing else refers to them).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from storage.sql._schema import UTCDateTime

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "grants",
        sa.Column("grant_id", _ID, nullable=False),
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
        sa.PrimaryKeyConstraint("grant_id", name="pk_grants"),
    )
    op.create_index("ix_grants_thread_id", "grants", ["thread_id"])
    op.create_index("ix_grants_resource_id", "grants", ["resource_id"])
    op.create_index("ix_grants_granted_by", "grants", ["granted_by"])


def downgrade() -> None:
    op.drop_table("grants")
