"""The decision path on PostgreSQL: ``commit``, ``load_run`` and ``add_approval``, one
statement (one round trip, its own transaction) each.

Each call runs a function of migration ``0005`` (``countersign_commit`` as ``0008`` replaced
it, with the lease fence of a completion; ``countersign_load_run``,
``countersign_add_approval``) with JSON arguments and gets one JSON
document back; the functions write and read the same columns as
``storage.sql.sqlite._decision_path`` and
return rows as ``row_to_json`` objects, which are read into the records here. Values are
converted as the table types of ``storage.sql._schema`` convert them: timestamps go as ISO 8601
with their offset (``timestamptz``, microseconds kept) and come back as aware UTC datetimes,
JSON documents go as their own text (PostgreSQL stores it as it is, so key order and the stored
text are those of a write through SQLAlchemy, ``\\u0000`` included). Errors the functions raise
carry our own SQLSTATE codes and become ``SnapshotVersionConflict`` / ``KeyError`` /
``StaleLease`` with the usual messages.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from storage import _codec as codec
from storage._change import ApprovalTally, StateChange
from storage._errors import SnapshotVersionConflict, StaleLease
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    EscalationRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)
from storage.sql.postgres._calls import PostgresCalls
from storage.sql.sqlite._decision_path import RunState
from storage.sql.sqlite._escalations import RunWithEscalations

# ``$1::text``: the argument goes as text whatever JSON codec the connection was given, and
# the result comes back as text that ``json.loads`` reads with its key order.
COMMIT = (
    "SELECT countersign_commit($1::text::json, $2::text, $3::text, $4::text::json,"
    " $5::text[], $6::text::json, $7::text, $8::text, $9::text::json, $10::text,"
    " $11::text::json, $12::text[], $13::text::json, $14::text[])::text"
)
LOAD_RUN = "SELECT countersign_load_run($1::text)::text"
ADD_APPROVAL = "SELECT countersign_add_approval($1::text::json)::text"

MISSING_CLAIM = "CS404"
"""SQLSTATE of ``countersign_commit`` completing a claim that does not exist."""
VERSION_CONFLICT = "CS409"
"""SQLSTATE of ``countersign_commit`` saving a snapshot that does not follow the stored one."""
LEASE_LOST = "CS423"
"""SQLSTATE of ``countersign_commit`` (migration ``0008``) refusing a fenced completion whose
owner or epoch is no longer the claim's."""


async def apply(calls: PostgresCalls, change: StateChange) -> ClaimRecord | None:
    """Write ``change`` in one statement (``StateChange`` semantics): None when applied, the
    stored claim (having written nothing) when ``change.claim``'s key is taken."""
    try:
        found = await calls.fetchval(COMMIT, *change_arguments(change))
    except asyncpg.PostgresError as exc:
        if (ours := refusal(exc)) is not None:
            raise ours from None
        raise
    return claim_found(found)


def claim_found(found: str | None) -> ClaimRecord | None:
    """What ``countersign_commit`` answered: None (applied) or the stored claim."""
    return None if found is None else codec.from_document(ClaimRecord, json.loads(found))


def refusal(exc: asyncpg.PostgresError) -> Exception | None:
    """Our error for one ``countersign_commit`` raised with our own SQLSTATE, else None."""
    if exc.sqlstate == VERSION_CONFLICT:
        run_id, expected = json.loads(exc.detail)
        return SnapshotVersionConflict(run_id, expected)
    if exc.sqlstate == MISSING_CLAIM:
        run_id, key = json.loads(exc.detail)
        return KeyError(
            f"no claim {key!r} on run {run_id!r} to complete: claim() it before completing it"
        )
    if exc.sqlstate == LEASE_LOST:
        run_id, key, owner, epoch, held_by, held_at = json.loads(exc.detail)
        held = f"{held_by!r} at epoch {held_at}"
        return StaleLease(run_id, key, owner=owner, epoch=epoch, held=held)
    return None


async def load_run(calls: PostgresCalls, run_id: str) -> RunState:
    """The snapshot, claims and approvals of ``run_id``, read by one statement."""
    snapshot, claims, approvals, _ = await load_run_and_escalations(calls, run_id)
    return snapshot, claims, approvals


async def load_run_and_escalations(calls: PostgresCalls, run_id: str) -> RunWithEscalations:
    """``load_run`` with the run's escalation steps, read by the same one statement (the
    function ``0010`` replaced)."""
    found = json.loads(await calls.fetchval(LOAD_RUN, run_id, read=True))
    snapshot = found["snapshot"]
    return (
        None if snapshot is None else codec.from_document(SnapshotRecord, snapshot),
        [codec.from_document(ClaimRecord, row) for row in found["claims"] or ()],
        [codec.from_document(ApprovalRecord, row) for row in found["approvals"] or ()],
        [codec.from_document(EscalationRecord, row) for row in found.get("escalations") or ()],
    )


async def add_approval(calls: PostgresCalls, record: ApprovalRecord) -> ApprovalTally:
    """``Storage.add_approval`` in one statement (the call's advisory lock included)."""
    document = json.dumps(codec.document(record))
    found = json.loads(await calls.fetchval(ADD_APPROVAL, document))
    held = found["claim"]
    return ApprovalTally(
        added=found["added"],
        approvals=[codec.from_document(ApprovalRecord, row) for row in found["approvals"] or ()],
        claim=None if held is None else codec.from_document(ClaimRecord, held),
    )


# -- the arguments of countersign_commit: per part, its plain columns as one JSON document and
# -- the text of its JSON columns apart (None when the part is absent) ----------------------
def change_arguments(change: StateChange) -> tuple[object, ...]:
    claim = change.claim
    completions, outcomes = None, None
    if change.completions:
        at = codec.stamp(utcnow()).isoformat()
        completions = [
            {"run_id": c.run_id, "key": c.key, "at": at, "owner": c.owner, "epoch": c.epoch}
            for c in change.completions
        ]
        outcomes = [json.dumps(c.outcome) for c in change.completions]
    snapshot, thread = change.snapshot, change.thread
    return (
        None if claim is None else json.dumps(_columns(claim)),
        None if claim is None else json.dumps(claim.detail),
        None if claim is None else json.dumps(claim.outcome),
        None if completions is None else json.dumps(completions),
        outcomes,
        None if snapshot is None else json.dumps(_columns(snapshot)),
        None if snapshot is None else json.dumps(snapshot.data),
        change.delete_snapshot,
        None if thread is None else json.dumps(_columns(thread)),
        None if thread is None else json.dumps(thread.metadata),
        json.dumps([_columns(m) for m in change.messages]) if change.messages else None,
        [json.dumps(m.content) for m in change.messages] if change.messages else None,
        json.dumps([_columns(e) for e in change.audit]) if change.audit else None,
        [json.dumps(e.data) for e in change.audit] if change.audit else None,
    )


_JSON_COLUMNS = frozenset({"detail", "outcome", "data", "metadata", "content"})
"""The records' JSON documents: they travel as their own text, beside the plain columns."""


def _columns(
    record: ClaimRecord | SnapshotRecord | ThreadRecord | MessageRecord | AuditEvent,
) -> dict[str, Any]:
    """A record's plain columns as one JSON document (timestamps as ISO 8601 with offset)."""
    return codec.document(record, without=_JSON_COLUMNS)
