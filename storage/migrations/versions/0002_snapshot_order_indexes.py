"""Snapshot indexes end in run_id, so listing reads rows in order without sorting.

``list_snapshots`` orders by ``suspended_at DESC, run_id DESC``; with ``run_id`` in the index
the database walks the index backwards and stops after the page, ties included.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LEADING = ("agent_id", "thread_id", "resource_id", None)


def _columns(leading: str | None) -> list[str]:
    return [c for c in (leading, "suspended_at") if c is not None]


def upgrade() -> None:
    for leading in _LEADING:
        old = _columns(leading)
        op.drop_index(f"ix_snapshots_{'_'.join(old)}", table_name="snapshots")
        op.create_index(f"ix_snapshots_{'_'.join(old)}_run_id", "snapshots", [*old, "run_id"])


def downgrade() -> None:
    for leading in _LEADING:
        old = _columns(leading)
        op.drop_index(f"ix_snapshots_{'_'.join(old)}_run_id", table_name="snapshots")
        op.create_index(f"ix_snapshots_{'_'.join(old)}", "snapshots", old)
