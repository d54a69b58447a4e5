"""Two indexes no query of countersign needs, dropped: every write paid for them.

Each index is one more B-tree page written per insert (on SQLite one more WAL frame per
commit); an approval cycle wrote 50 pages, these two were 6 of them.

- ``claims(status, decided_at)``: served ``list_unfinished_claims``, which the runtime no longer
  calls (leases decide: ``take_over_expired_claims`` uses ``claims(status, lease_until)``). The
  method still works, through that index.
- ``audit(tool_call_id, at)``: a tool call id is unique only within its run (a scripted model's
  ``c1`` is in every run), so the audit of a call is asked for with its run id, which
  ``audit(run_id, at)`` answers; a query by call id alone reads the table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_claims_status_decided_at", table_name="claims")
    op.drop_index("ix_audit_tool_call_id_at", table_name="audit")


def downgrade() -> None:
    op.create_index("ix_audit_tool_call_id_at", "audit", ["tool_call_id", "at"])
    op.create_index("ix_claims_status_decided_at", "claims", ["status", "decided_at"])
