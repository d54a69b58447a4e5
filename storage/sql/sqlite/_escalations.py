"""SQLite's read of a run with its escalation steps, on the standard ``sqlite3`` driver: the
decision path's ``load_run`` and one more statement, in the caller's read transaction."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from storage._records import ApprovalRecord, ClaimRecord, EscalationRecord, SnapshotRecord
from storage.sql.sqlite._decision_path import Connection, load_run

RunWithEscalations = tuple[
    SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord], list[EscalationRecord]
]
"""What ``Storage.load_run_and_escalations`` returns."""

_ESCALATIONS_OF_RUN = (
    "SELECT run_id, key, step, approvers, notify, escalated_at FROM escalations"
    " WHERE run_id = ? ORDER BY key, step"
)


def load_run_and_escalations(conn: Connection, run_id: str) -> RunWithEscalations:
    """``load_run`` of ``run_id`` and its escalation steps, inside one read transaction."""
    snapshot, claims, approvals = load_run(conn, run_id)
    rows = conn.execute(_ESCALATIONS_OF_RUN, (run_id,)).fetchall()
    return snapshot, claims, approvals, [_escalation(row) for row in rows]


def _escalation(row: Any) -> EscalationRecord:
    return EscalationRecord(
        run_id=row[0],
        key=row[1],
        step=int(row[2]),
        approvers=list(json.loads(row[3])),
        notify=list(json.loads(row[4])),
        escalated_at=datetime.fromisoformat(row[5]).replace(tzinfo=UTC),
    )
