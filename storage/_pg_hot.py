"""The decision path on PostgreSQL: ``commit``, ``load_run`` and ``add_approval``, one
statement (one round trip, its own transaction) each.

Each call runs a function of migration ``0005`` (``countersign_commit``,
``countersign_load_run``, ``countersign_add_approval``) with JSON arguments and gets one JSON
document back; the functions write and read the same columns as ``storage._sqlite_hot`` and
return rows as ``row_to_json`` objects, which are read into the records here. Values are
converted as the table types of ``storage._sql_schema`` convert them: timestamps go as ISO 8601
with their offset (``timestamptz``, microseconds kept) and come back as aware UTC datetimes,
JSON documents go as their own text (PostgreSQL stores it as it is, so key order and the stored
text are those of a write through SQLAlchemy, ``\\u0000`` included). Errors the functions raise
carry our own SQLSTATE codes and become ``SnapshotVersionConflict`` / ``KeyError`` with the
usual messages.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import asyncpg

from storage._change import ApprovalTally, StateChange
from storage._errors import SnapshotVersionConflict
from storage._pg_driver import PostgresCalls
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage._sqlite_hot import RunState

# ``$1::text``: the argument goes as text whatever JSON codec the connection was given, and
# the result comes back as text that ``json.loads`` reads with its key order.
_COMMIT = (
    "SELECT countersign_commit($1::text::json, $2::text, $3::text, $4::text::json,"
    " $5::text[], $6::text::json, $7::text, $8::text, $9::text::json, $10::text,"
    " $11::text::json, $12::text[], $13::text::json, $14::text[])::text"
)
_LOAD_RUN = "SELECT countersign_load_run($1::text)::text"
_ADD_APPROVAL = "SELECT countersign_add_approval($1::text::json)::text"

MISSING_CLAIM = "CS404"
"""SQLSTATE of ``countersign_commit`` completing a claim that does not exist."""
VERSION_CONFLICT = "CS409"
"""SQLSTATE of ``countersign_commit`` saving a snapshot that does not follow the stored one."""


async def apply(calls: PostgresCalls, change: StateChange) -> ClaimRecord | None:
    """Write ``change`` in one statement (``StateChange`` semantics): None when applied, the
    stored claim (having written nothing) when ``change.claim``'s key is taken."""
    try:
        found = await calls.fetchval(_COMMIT, *_change_arguments(change))
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == VERSION_CONFLICT:
            run_id, expected = json.loads(exc.detail)
            raise SnapshotVersionConflict(run_id, expected) from None
        if exc.sqlstate == MISSING_CLAIM:
            run_id, key = json.loads(exc.detail)
            raise KeyError(
                f"no claim {key!r} on run {run_id!r} to complete: claim() it before completing it"
            ) from None
        raise
    return None if found is None else _claim(json.loads(found))


async def load_run(calls: PostgresCalls, run_id: str) -> RunState:
    """The snapshot, claims and approvals of ``run_id``, read by one statement."""
    found = json.loads(await calls.fetchval(_LOAD_RUN, run_id, read=True))
    snapshot = found["snapshot"]
    return (
        None if snapshot is None else _snapshot(snapshot),
        [_claim(row) for row in found["claims"] or ()],
        [_approval(row) for row in found["approvals"] or ()],
    )


async def add_approval(calls: PostgresCalls, record: ApprovalRecord) -> ApprovalTally:
    """``Storage.add_approval`` in one statement (the call's advisory lock included)."""
    document = {
        "run_id": record.run_id,
        "key": record.key,
        "approver": record.approver,
        "approved_at": _timestamp(record.approved_at),
    }
    found = json.loads(await calls.fetchval(_ADD_APPROVAL, json.dumps(document)))
    held = found["claim"]
    return ApprovalTally(
        added=found["added"],
        approvals=[_approval(row) for row in found["approvals"] or ()],
        claim=None if held is None else _claim(held),
    )


# -- the arguments of countersign_commit: per part, its plain columns as one JSON document and
# -- the text of its JSON columns apart (None when the part is absent) ----------------------
def _change_arguments(change: StateChange) -> tuple[object, ...]:
    claim = change.claim
    completions, outcomes = None, None
    if change.completions:
        at = _timestamp(utcnow())
        completions = [{"run_id": c.run_id, "key": c.key, "at": at} for c in change.completions]
        outcomes = [json.dumps(c.outcome) for c in change.completions]
    snapshot, thread = change.snapshot, change.thread
    return (
        None if claim is None else json.dumps(_claim_values(claim)),
        None if claim is None else json.dumps(claim.detail),
        None if claim is None else json.dumps(claim.outcome),
        None if completions is None else json.dumps(completions),
        outcomes,
        None if snapshot is None else json.dumps(_snapshot_values(snapshot)),
        None if snapshot is None else json.dumps(snapshot.data),
        change.delete_snapshot,
        None if thread is None else json.dumps(_thread_values(thread)),
        None if thread is None else json.dumps(thread.metadata),
        json.dumps([_message_values(m) for m in change.messages]) if change.messages else None,
        [json.dumps(m.content) for m in change.messages] if change.messages else None,
        json.dumps([_audit_values(e) for e in change.audit]) if change.audit else None,
        [json.dumps(e.data) for e in change.audit] if change.audit else None,
    )


def _claim_values(record: ClaimRecord) -> dict[str, Any]:
    return {
        "run_id": record.run_id,
        "key": record.key,
        "tool_call_id": record.tool_call_id,
        "decision": record.decision,
        "decided_by": record.decided_by,
        "decided_at": _timestamp(record.decided_at),
        "status": record.status,
        "completed_at": _optional_timestamp(record.completed_at),
        "owner": record.owner,
        "lease_until": _optional_timestamp(record.lease_until),
    }


def _snapshot_values(record: SnapshotRecord) -> dict[str, Any]:
    return {
        "run_id": record.run_id,
        "agent_id": record.agent_id,
        "thread_id": record.thread_id,
        "resource_id": record.resource_id,
        "suspended_at": _timestamp(record.suspended_at),
        "version": record.version,
        "decidable": record.decidable,
    }


def _thread_values(record: ThreadRecord) -> dict[str, Any]:
    return {
        "thread_id": record.thread_id,
        "resource_id": record.resource_id,
        "created_at": _timestamp(record.created_at),
        "updated_at": _timestamp(record.updated_at),
    }


def _message_values(record: MessageRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "thread_id": record.thread_id,
        "resource_id": record.resource_id,
        "run_id": record.run_id,
        "role": record.role,
        "created_at": _timestamp(record.created_at),
    }


def _audit_values(event: AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "at": _timestamp(event.at),
        "kind": event.kind,
        "run_id": event.run_id,
        "tool_call_id": event.tool_call_id,
        "thread_id": event.thread_id,
        "agent_id": event.agent_id,
        "actor": event.actor,
        "source": event.source,
    }


# -- rows back (``row_to_json``: the column names are the record fields) ---------------------
def _snapshot(row: dict[str, Any]) -> SnapshotRecord:
    return SnapshotRecord(
        run_id=row["run_id"],
        agent_id=row["agent_id"],
        thread_id=row["thread_id"],
        resource_id=row["resource_id"],
        suspended_at=_time(row["suspended_at"]),
        version=row["version"],
        data=row["data"],
        decidable=row["decidable"],
    )


def _claim(row: dict[str, Any]) -> ClaimRecord:
    return ClaimRecord(
        run_id=row["run_id"],
        key=row["key"],
        tool_call_id=row["tool_call_id"],
        decision=row["decision"],
        decided_by=row["decided_by"],
        decided_at=_time(row["decided_at"]),
        detail=row["detail"],
        status=row["status"],
        outcome=row["outcome"],
        completed_at=_optional_time(row["completed_at"]),
        owner=row["owner"],
        lease_until=_optional_time(row["lease_until"]),
    )


def _approval(row: dict[str, Any]) -> ApprovalRecord:
    return ApprovalRecord(
        run_id=row["run_id"],
        key=row["key"],
        approver=row["approver"],
        approved_at=_time(row["approved_at"]),
    )


# -- timestamps, as UTCDateTime takes and gives them -----------------------------------------
def _timestamp(value: datetime) -> str:
    """ISO 8601 with the UTC offset, microseconds kept; naive datetimes are refused."""
    if value.tzinfo is None:
        raise ValueError(
            f"naive datetime {value.isoformat()} given to storage: "
            "pass a timezone-aware one (storage.utcnow() or datetime.now(UTC))"
        )
    return value.astimezone(UTC).isoformat()


def _optional_timestamp(value: datetime | None) -> str | None:
    return None if value is None else _timestamp(value)


def _time(text: str) -> datetime:
    """A ``timestamptz`` as ``to_json`` writes it (in the session's time zone), in UTC."""
    return datetime.fromisoformat(text).astimezone(UTC)


def _optional_time(text: str | None) -> datetime | None:
    return None if text is None else _time(text)
