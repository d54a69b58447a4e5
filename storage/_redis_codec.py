"""Records ↔ JSON text for ``RedisStorage`` (timestamps as ISO 8601 with offset)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from typing import Any

from storage._records import (
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    R,
    SnapshotRecord,
    ThreadRecord,
)

_TIMESTAMPS = frozenset(
    {
        "suspended_at",
        "decided_at",
        "completed_at",
        "created_at",
        "updated_at",
        "at",
        "lease_until",
        "approved_at",
    }
)


def dumps(
    record: ApprovalRecord
    | AuditEvent
    | ClaimRecord
    | MessageRecord
    | SnapshotRecord
    | ThreadRecord,
) -> str:
    """JSON text of a record."""
    doc: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        doc[f.name] = stamp(value).isoformat() if isinstance(value, datetime) else value
    return json.dumps(doc, separators=(",", ":"))


def loads(cls: type[R], text: str | bytes) -> R:
    """The record of type ``cls`` encoded in ``text``."""
    doc = json.loads(text)
    for name in _TIMESTAMPS.intersection(doc):
        if doc[name] is not None:
            doc[name] = datetime.fromisoformat(doc[name]).astimezone(UTC)
    return cls(**doc)


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
