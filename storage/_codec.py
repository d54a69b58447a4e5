"""Records ↔ JSON documents, timestamps as ISO 8601 with their offset (UTC).

``RedisStorage`` stores records as this JSON text; the PostgreSQL functions of the decision path
(``storage.sql.postgres._decision_path``) take their arguments and give their rows as these
documents.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

from storage._records import (
    ApprovalRecord,
    AuditEvent,
    CardRecord,
    ClaimRecord,
    EscalationRecord,
    GrantRecord,
    MessageRecord,
    OutboxEntry,
    R,
    SnapshotRecord,
    ThreadRecord,
)

_TIMESTAMPS = frozenset(
    {
        "suspended_at",
        "due_at",
        "decided_at",
        "completed_at",
        "created_at",
        "updated_at",
        "at",
        "lease_until",
        "approved_at",
        "posted_at",
        "next_try_at",
        "escalated_at",
        "expires_at",
        "revoked_at",
    }
)


Record = (
    ApprovalRecord
    | AuditEvent
    | CardRecord
    | ClaimRecord
    | EscalationRecord
    | GrantRecord
    | MessageRecord
    | OutboxEntry
    | SnapshotRecord
    | ThreadRecord
)
"""Any one stored record."""


def document(record: Record, *, without: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The fields of ``record`` (but ``without``) as a JSON-ready dict; naive datetimes refused."""
    doc: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        if f.name not in without:
            value = getattr(record, f.name)
            doc[f.name] = stamp(value).isoformat() if isinstance(value, datetime) else value
    return doc


def dumps(record: Record) -> str:
    """JSON text of a record."""
    return json.dumps(document(record), separators=(",", ":"))


def from_document(cls: type[R], doc: dict[str, Any]) -> R:
    """The record of type ``cls`` in ``doc`` (as ``document`` writes it); timestamps in UTC."""
    for name in _TIMESTAMPS.intersection(doc):
        if doc[name] is not None:
            doc[name] = datetime.fromisoformat(doc[name]).astimezone(UTC)
    return cls(**doc)


def loads(cls: type[R], text: str | bytes) -> R:
    """The record of type ``cls`` encoded in ``text``."""
    return from_document(cls, json.loads(text))


def stamp(value: datetime) -> datetime:
    """``value`` in UTC; refuses naive datetimes, whose meaning would depend on the host."""
    if value.tzinfo is None:
        raise ValueError(
            f"naive datetime {value.isoformat()} given to storage: "
            "pass a timezone-aware one (storage.utcnow() or datetime.now(UTC))"
        )
    return value.astimezone(UTC)


def score(value: datetime) -> int:
    """Integer microseconds since the epoch: exact as a sorted-set score (below 2**53)."""
    delta = stamp(value) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
