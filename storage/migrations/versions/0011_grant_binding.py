"""Grants bound to what they were made for (SPEC 15): ``grants.rule`` and
``grants.definition_digest``.

A grant stores the key of the policy rule it was made under and the ``definition_digest`` of
its tool; a later call is approved by it only under the same rule and the same definition.
Grants made before this revision have neither (NULL): they approve nothing more, since no tool's
definition has a NULL digest.

Downgrade drops both columns.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("grants") as batch:
        batch.add_column(sa.Column("rule", sa.String(255), nullable=True))
        batch.add_column(sa.Column("definition_digest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("grants") as batch:
        batch.drop_column("definition_digest")
        batch.drop_column("rule")
