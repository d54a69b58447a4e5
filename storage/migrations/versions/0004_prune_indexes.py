"""Indexes for ``prune``: completed claims and approvals found by age, not by a table scan.

- ``claims(status, completed_at)``: completed claims older than the cutoff.
- ``approvals(approved_at)``: approvals older than the cutoff whose run has ended.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-15
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_claims_status_completed_at", "claims", ["status", "completed_at"])
    op.create_index("ix_approvals_approved_at", "approvals", ["approved_at"])


def downgrade() -> None:
    op.drop_index("ix_approvals_approved_at", table_name="approvals")
    op.drop_index("ix_claims_status_completed_at", table_name="claims")
