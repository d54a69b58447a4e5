"""Escalation steps (SPEC 15): the ``escalations`` table.

One row per ``(run_id, key, step)``: a step a pending call went through while nobody decided
it, who it told (``notify``) and who may approve the call from then on (``approvers``). Written
by ``Storage.escalate`` (a compare-and-set on the step number, nothing once the key is claimed).

Downgrade drops the table (the ``escalated`` audit events still say what happened).

Revision ID: 0010
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from storage.sql._schema import UTCDateTime

revision: str = "0010"
down_revision: str | None = "0008"  # 0009 (grants) is made on another branch: chain after it
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)


def upgrade() -> None:
    op.create_table(
        "escalations",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("key", _ID, nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("approvers", sa.JSON(), nullable=False),
        sa.Column("notify", sa.JSON(), nullable=False),
        sa.Column("escalated_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "key", "step", name="pk_escalations"),
    )


def downgrade() -> None:
    op.drop_table("escalations")
