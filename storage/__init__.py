"""Durable state for countersign: one ``Storage`` protocol, several backends chosen by URL.

Example:
    >>> from storage import create_storage
    >>> store = create_storage("memory://")
"""

from typing import TYPE_CHECKING, Any

from storage._change import ApprovalTally, BatchRefusal, Completion, DecisionBatch, StateChange
from storage._errors import (
    GrantUnavailable,
    SnapshotVersionConflict,
    StaleLease,
    StorageConfigError,
    StorageError,
    StorageUnavailable,
    patiently,
)
from storage._factory import DEFAULT_STORAGE_URL, create_storage
from storage._memory import InMemoryStorage
from storage._protocol import Storage
from storage._prune import PruneReport
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    AuditKind,
    CardRecord,
    ClaimRecord,
    DueKey,
    EdgeAuditKind,
    EscalationRecord,
    GrantRecord,
    GrantUse,
    MessageRecord,
    OutboxEntry,
    RuntimeAuditKind,
    SnapshotKey,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)

if TYPE_CHECKING:
    from storage.redis._storage import RedisStorage
    from storage.sql._storage import SQLStorage

__all__ = [
    "DEFAULT_STORAGE_URL",
    "ApprovalRecord",
    "ApprovalTally",
    "AuditEvent",
    "AuditKind",
    "BatchRefusal",
    "CardRecord",
    "ClaimRecord",
    "Completion",
    "DecisionBatch",
    "DueKey",
    "EdgeAuditKind",
    "EscalationRecord",
    "GrantRecord",
    "GrantUnavailable",
    "GrantUse",
    "InMemoryStorage",
    "MessageRecord",
    "OutboxEntry",
    "PruneReport",
    "RedisStorage",
    "RuntimeAuditKind",
    "SQLStorage",
    "SnapshotKey",
    "SnapshotRecord",
    "SnapshotVersionConflict",
    "StaleLease",
    "StateChange",
    "Storage",
    "StorageConfigError",
    "StorageError",
    "StorageUnavailable",
    "ThreadRecord",
    "create_storage",
    "patiently",
    "utcnow",
]


def __getattr__(name: str) -> Any:
    """Import the SQL and Redis backends only when first asked for (they pull in drivers)."""
    if name == "SQLStorage":
        from storage.sql._storage import SQLStorage

        return SQLStorage
    if name == "RedisStorage":
        from storage.redis._storage import RedisStorage

        return RedisStorage
    raise AttributeError(f"module 'storage' has no attribute {name!r}")
