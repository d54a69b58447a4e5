"""The decision point's storage: claim owner and lease, quorum approvals, decidable snapshots.

- ``claims.owner`` / ``claims.lease_until`` (NULL on existing rows: such a claim counts as
  expired, so a running instance takes it over), indexed by ``(status, lease_until)`` for
  ``take_over_expired_claims``.
- ``approvals``: one row per approver of a pending item, primary key ``(run_id, key,
  approver)`` so an approver counts once.
- ``snapshots.decidable`` (existing rows: true), indexed for ``list_snapshots(decidable_only)``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)


def upgrade() -> None:
    with op.batch_alter_table("claims") as batch:
        batch.add_column(sa.Column("owner", _ID, nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_claims_status_lease_until", "claims", ["status", "lease_until"])

    with op.batch_alter_table("snapshots") as batch:
        batch.add_column(
            sa.Column("decidable", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    op.create_index(
        "ix_snapshots_decidable_suspended_at_run_id",
        "snapshots",
        ["decidable", "suspended_at", "run_id"],
    )

    op.create_table(
        "approvals",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("key", _ID, nullable=False),
        sa.Column("approver", _ID, nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "key", "approver", name="pk_approvals"),
    )


def downgrade() -> None:
    op.drop_table("approvals")
    op.drop_index("ix_snapshots_decidable_suspended_at_run_id", table_name="snapshots")
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("decidable")
    op.drop_index("ix_claims_status_lease_until", table_name="claims")
    with op.batch_alter_table("claims") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("owner")
