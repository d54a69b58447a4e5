"""Grants indexed for ``prune`` and counting: ``grants(expires_at)``, ``grants(revoked_at)`` and
``grants(created_at)`` let ``prune`` find expired, revoked and used-up grants without reading the
others, and ``grants(agent_id, expires_at)`` counts an agent's grants usable now (the metrics'
gauge).

Downgrade drops the four indexes.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-10
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_grants_expires_at", "grants", ["expires_at"])
    op.create_index("ix_grants_agent_id_expires_at", "grants", ["agent_id", "expires_at"])
    op.create_index("ix_grants_revoked_at", "grants", ["revoked_at"])
    op.create_index("ix_grants_created_at", "grants", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_grants_created_at", table_name="grants")
    op.drop_index("ix_grants_revoked_at", table_name="grants")
    op.drop_index("ix_grants_agent_id_expires_at", table_name="grants")
    op.drop_index("ix_grants_expires_at", table_name="grants")
