"""SQLite's decision path on the standard ``sqlite3`` driver: ``commit``, ``load_run`` and
``add_approval``, the calls every approval cycle makes.

SQLAlchemy's execution pipeline (compiled-cache lookup, events, result objects, the greenlet hop of
its asyncio layer) cost about 0.2 ms per statement, ten times what SQLite itself needs; a cycle is
four transactions. Here the same statements are plain SQL text with named parameters, run on the
engine's own connection (``SQLDatabase.sqlite_connection``), and the values are converted exactly as
the table types in ``storage.sql._schema`` convert them, so a row written here reads back
identically through SQLAlchemy and the other way round (listing, leases, prune and the other reads
still go through SQLAlchemy; the contract suite runs both). A database not driven in the loop's
thread (an engine the caller gave, ``:memory:``) runs the same statements through SQLAlchemy
(``ThroughSQLAlchemy``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from storage._change import (
    ApprovalTally,
    BatchRefusal,
    Completion,
    DecisionBatch,
    StateChange,
    fenced,
)
from storage._errors import SnapshotVersionConflict
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage.sql.sqlite._values import json_text, optional_timestamp, parse_time, timestamp


class Cursor(Protocol):
    """What ``apply`` and ``load_run`` read off an executed statement."""

    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> Sequence[Any]: ...


class Connection(Protocol):
    """The two calls ``apply`` and ``load_run`` make: ``sqlite3.Connection`` has them, and
    ``ThroughSQLAlchemy`` gives them to a connection SQLAlchemy drives."""

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...
    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...


class ThroughSQLAlchemy:
    """The same statements on a SQLAlchemy connection, for a SQLite database not driven in the
    loop's thread (an engine the caller gave, ``:memory:``): one implementation either way."""

    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor:
        return self._conn.exec_driver_sql(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Cursor:
        return self._conn.exec_driver_sql(sql, list(parameters))


RunState = tuple[SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord]]
"""What ``load_run`` returns: the snapshot, the claims and the approvals of one run."""

_SNAPSHOT_COLUMNS = (
    "run_id, agent_id, thread_id, resource_id, suspended_at, version, data, decidable, due_at"
)
_CLAIM_COLUMNS = (
    "run_id, key, tool_call_id, decision, decided_by, decided_at, detail, status, outcome,"
    " completed_at, owner, lease_until, epoch"
)
_APPROVAL_COLUMNS = "run_id, key, approver, approved_at"

_INSERT_CLAIM = (
    f"INSERT INTO claims ({_CLAIM_COLUMNS}) VALUES (:run_id, :key, :tool_call_id, :decision,"
    " :decided_by, :decided_at, :detail, :status, :outcome, :completed_at, :owner, :lease_until,"
    " :epoch)"
    " ON CONFLICT (run_id, key) DO NOTHING"
)
_CLAIM_OF_KEY = f"SELECT {_CLAIM_COLUMNS} FROM claims WHERE run_id = ? AND key = ?"
_COMPLETE = (
    "UPDATE claims SET status = 'completed', outcome = ?, completed_at = ?"
    " WHERE run_id = ? AND key = ?"
)
_COMPLETE_FENCED = _COMPLETE + " AND owner = ? AND epoch = ?"
"""A completion on behalf of an owner: written only while it still holds the claim's epoch."""
_INSERT_SNAPSHOT = (
    f"INSERT INTO snapshots ({_SNAPSHOT_COLUMNS}) VALUES (:run_id, :agent_id, :thread_id,"
    " :resource_id, :suspended_at, :version, :data, :decidable, :due_at)"
    " ON CONFLICT (run_id) DO NOTHING"
)
_UPDATE_SNAPSHOT = (
    "UPDATE snapshots SET agent_id = :agent_id, thread_id = :thread_id,"
    " resource_id = :resource_id, suspended_at = :suspended_at, version = :version, data = :data,"
    " decidable = :decidable, due_at = :due_at WHERE run_id = :run_id AND version = :previous"
)
_DELETE_SNAPSHOT = "DELETE FROM snapshots WHERE run_id = ?"
_DELETE_APPROVALS = "DELETE FROM approvals WHERE run_id = ?"
_SAVE_THREAD = (
    "INSERT INTO threads (thread_id, resource_id, created_at, updated_at, metadata)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET"
    " resource_id = excluded.resource_id, created_at = excluded.created_at,"
    " updated_at = excluded.updated_at, metadata = excluded.metadata"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (id, thread_id, resource_id, run_id, role, content, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_AUDIT = (
    "INSERT INTO audit (id, at, kind, run_id, tool_call_id, thread_id, agent_id, actor, source,"
    " data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_APPROVAL = (
    f"INSERT INTO approvals ({_APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (run_id, key, approver) DO NOTHING"
)
_APPROVALS_OF_KEY = (
    f"SELECT {_APPROVAL_COLUMNS} FROM approvals WHERE run_id = ? AND key = ?"
    " ORDER BY approved_at, key, approver"
)
_SNAPSHOT_OF_RUN = f"SELECT {_SNAPSHOT_COLUMNS} FROM snapshots WHERE run_id = ?"
_CLAIMS_OF_RUN = f"SELECT {_CLAIM_COLUMNS} FROM claims WHERE run_id = ? ORDER BY decided_at, key"
_APPROVALS_OF_RUN = (
    f"SELECT {_APPROVAL_COLUMNS} FROM approvals WHERE run_id = ?"
    " ORDER BY approved_at, key, approver"
)


def apply(conn: Connection, change: StateChange) -> ClaimRecord | None:
    """Write ``change`` inside the caller's transaction (``StateChange`` semantics).

    Returns the stored claim, having written nothing, when the key of ``change.claim`` or of
    one of ``change.claims`` is taken: those are looked up before the first write, and none is
    taken in between (``BEGIN IMMEDIATE``: one writer at a time). Raises
    ``SnapshotVersionConflict`` / ``KeyError`` after some statements ran: the caller rolls
    back (``SQLDatabase.sqlite_write`` does).
    """
    for record in change.claims:
        if row := conn.execute(_CLAIM_OF_KEY, (record.run_id, record.key)).fetchone():
            return _claim_record(row)
    for record in change.every_claim:
        if (existing := _claim(conn, record)) is not None:
            return existing
    for done in change.completions:
        at = timestamp(utcnow())
        values: tuple[Any, ...] = (json_text(done.outcome), at, done.run_id, done.key)
        if done.owner is None:
            cursor = conn.execute(_COMPLETE, values)
        else:
            cursor = conn.execute(_COMPLETE_FENCED, (*values, done.owner, done.epoch))
        if cursor.rowcount != 1:
            _refuse_completion(conn, done)
    if change.snapshot is not None:
        _save_snapshot(conn, change.snapshot)
    if change.delete_snapshot is not None:
        conn.execute(_DELETE_SNAPSHOT, (change.delete_snapshot,))
        conn.execute(_DELETE_APPROVALS, (change.delete_snapshot,))
    if change.thread is not None:
        conn.execute(_SAVE_THREAD, _thread_row(change.thread))
    _append_messages(conn, change.messages)
    _append_audit(conn, change.audit)
    return None


def _refuse_completion(conn: Connection, done: Completion) -> None:
    """Why ``done`` completed nothing: ``KeyError`` (no such claim) or ``StaleLease``."""
    row = conn.execute(_CLAIM_OF_KEY, (done.run_id, done.key)).fetchone()
    if row is None:
        raise KeyError(
            f"no claim {done.key!r} on run {done.run_id!r} to complete: claim() it first"
        )
    raise fenced(done, _claim_record(row))


def load_run(conn: Connection, run_id: str) -> RunState:
    """The snapshot, claims and approvals of ``run_id``, inside the caller's read transaction."""
    row = conn.execute(_SNAPSHOT_OF_RUN, (run_id,)).fetchone()
    snapshot = None if row is None else _snapshot(row)
    found = [_claim_record(r) for r in conn.execute(_CLAIMS_OF_RUN, (run_id,)).fetchall()]
    approvals = [_approval(r) for r in conn.execute(_APPROVALS_OF_RUN, (run_id,)).fetchall()]
    return snapshot, found, approvals


def add_approval(conn: Connection, record: ApprovalRecord) -> ApprovalTally:
    """Add one approval unless its key is claimed or this approver already approved it, inside
    the caller's write transaction (SQLite has one writer at a time: each approver counts the
    ones before theirs)."""
    row = conn.execute(_CLAIM_OF_KEY, (record.run_id, record.key)).fetchone()
    held = None if row is None else _claim_record(row)
    added = False
    if held is None:
        values = (record.run_id, record.key, record.approver, timestamp(record.approved_at))
        added = conn.execute(_INSERT_APPROVAL, values).rowcount == 1
    rows = conn.execute(_APPROVALS_OF_KEY, (record.run_id, record.key)).fetchall()
    return ApprovalTally(added=added, approvals=[_approval(r) for r in rows], claim=held)


class Refused(Exception):
    """Raised inside a batch's transaction to roll it back; carries the refusal."""

    def __init__(self, refusal: BatchRefusal) -> None:
        super().__init__(refusal.key)
        self.refusal = refusal


def apply_batch(conn: Connection, batch: DecisionBatch) -> None:
    """Write ``batch`` in the caller's transaction; ``Refused``: the caller rolls back."""
    for vote in batch.approvals:
        tally = add_approval(conn, vote)
        if not tally.added:  # a claim took it first, or the approver's second vote
            who = None if tally.claim is not None else vote.approver
            raise Refused(
                BatchRefusal(run_id=vote.run_id, key=vote.key, claim=tally.claim, approver=who)
            )
    for record in batch.claims:
        held = _claim(conn, record)
        if held is not None:
            raise Refused(BatchRefusal(run_id=record.run_id, key=record.key, claim=held))
    _append_audit(conn, batch.audit)


def _claim(conn: Connection, record: ClaimRecord) -> ClaimRecord | None:
    """Insert the claim unless its key is taken; None when inserted, else the stored one."""
    values = {
        "run_id": record.run_id,
        "key": record.key,
        "tool_call_id": record.tool_call_id,
        "decision": record.decision,
        "decided_by": record.decided_by,
        "decided_at": timestamp(record.decided_at),
        "detail": json_text(record.detail),
        "status": record.status,
        "outcome": json_text(record.outcome),
        "completed_at": optional_timestamp(record.completed_at),
        "owner": record.owner,
        "lease_until": optional_timestamp(record.lease_until),
        "epoch": record.epoch,
    }
    if conn.execute(_INSERT_CLAIM, values).rowcount == 1:
        return None
    return _claim_record(conn.execute(_CLAIM_OF_KEY, (record.run_id, record.key)).fetchone())


def _save_snapshot(conn: Connection, record: SnapshotRecord) -> None:
    """Insert (version 1) or replace (the next version); ``SnapshotVersionConflict`` otherwise."""
    values = {
        "run_id": record.run_id,
        "agent_id": record.agent_id,
        "thread_id": record.thread_id,
        "resource_id": record.resource_id,
        "suspended_at": timestamp(record.suspended_at),
        "version": record.version,
        "data": json_text(record.data),
        "decidable": int(record.decidable),
        "due_at": None if record.due_at is None else timestamp(record.due_at),
    }
    if record.version == 1:
        saved = conn.execute(_INSERT_SNAPSHOT, values).rowcount == 1
    elif record.version > 1:
        values["previous"] = record.version - 1
        saved = conn.execute(_UPDATE_SNAPSHOT, values).rowcount == 1
    else:
        saved = False
    if not saved:
        raise SnapshotVersionConflict(record.run_id, record.version - 1)


def _thread_row(record: ThreadRecord) -> tuple[Any, ...]:
    return (
        record.thread_id,
        record.resource_id,
        timestamp(record.created_at),
        timestamp(record.updated_at),
        json_text(record.metadata),
    )


def _append_messages(conn: Connection, records: Sequence[MessageRecord]) -> None:
    """Insert messages in order (the autoincrement ``seq`` keeps it)."""
    if records:
        conn.executemany(
            _INSERT_MESSAGE,
            [
                (
                    m.id,
                    m.thread_id,
                    m.resource_id,
                    m.run_id,
                    m.role,
                    json_text(m.content),
                    timestamp(m.created_at),
                )
                for m in records
            ],
        )


def _append_audit(conn: Connection, events: Sequence[AuditEvent]) -> None:
    """Append audit events in order."""
    if events:
        conn.executemany(
            _INSERT_AUDIT,
            [
                (
                    e.id,
                    timestamp(e.at),
                    e.kind,
                    e.run_id,
                    e.tool_call_id,
                    e.thread_id,
                    e.agent_id,
                    e.actor,
                    e.source,
                    json_text(e.data),
                )
                for e in events
            ],
        )


def _snapshot(row: tuple[Any, ...]) -> SnapshotRecord:
    return SnapshotRecord(
        run_id=row[0],
        agent_id=row[1],
        thread_id=row[2],
        resource_id=row[3],
        suspended_at=parse_time(row[4]),
        version=row[5],
        data=json.loads(row[6]),
        decidable=bool(row[7]),
        due_at=None if row[8] is None else parse_time(row[8]),
    )


def _approval(row: Sequence[Any]) -> ApprovalRecord:
    return ApprovalRecord(
        run_id=row[0], key=row[1], approver=row[2], approved_at=parse_time(row[3])
    )


def _claim_record(row: tuple[Any, ...]) -> ClaimRecord:
    return ClaimRecord(
        run_id=row[0],
        key=row[1],
        tool_call_id=row[2],
        decision=row[3],
        decided_by=row[4],
        decided_at=parse_time(row[5]),
        detail=json.loads(row[6]),
        status=row[7],
        outcome=None if row[8] is None else json.loads(row[8]),
        completed_at=None if row[9] is None else parse_time(row[9]),
        owner=row[10],
        lease_until=None if row[11] is None else parse_time(row[11]),
        epoch=row[12],
    )
