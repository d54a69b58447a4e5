"""Escalation steps (SPEC 15): the ``escalations`` table.

One row per ``(run_id, key, step)``: a step a pending call went through while nobody decided
it, who it told (``notify``) and who may approve the call from then on (``approvers``). Written
by ``Storage.escalate`` (a compare-and-set on the step number, nothing once the key is claimed).

On PostgreSQL ``countersign_load_run`` is replaced (same signature) to return the run's
escalation steps too (``escalations``), so a decision still reads its run in one statement.

Downgrade drops the table and restores ``0005``'s function (the ``escalated`` audit events
still say what happened).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from storage.sql._schema import UTCDateTime

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)

_LOAD_RUN = """
CREATE OR REPLACE FUNCTION countersign_load_run(wanted text) RETURNS json
LANGUAGE plpgsql STABLE AS $body$
BEGIN
    RETURN json_build_object(
        'snapshot', (SELECT row_to_json(s) FROM snapshots AS s WHERE s.run_id = wanted),
        'claims', (SELECT json_agg(c ORDER BY c.decided_at, c.key)
                   FROM claims AS c WHERE c.run_id = wanted),
        'approvals', (SELECT json_agg(a ORDER BY a.approved_at, a.key, a.approver)
                      FROM approvals AS a WHERE a.run_id = wanted),
        'escalations', (SELECT json_agg(e ORDER BY e.key, e.step)
                        FROM escalations AS e WHERE e.run_id = wanted));
END
$body$
"""


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
    op.create_index("ix_escalations_escalated_at", "escalations", ["escalated_at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_LOAD_RUN)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        before = importlib.import_module(
            "storage.migrations.versions.0005_postgres_state_functions"
        )
        op.execute(before._LOAD_RUN)
    op.drop_table("escalations")
