"""Durable state for countersign: one ``Storage`` protocol, several backends chosen by URL.

Example:
    >>> from storage import create_storage
    >>> store = create_storage("memory://")
"""

from storage._errors import SnapshotVersionConflict, StorageConfigError, StorageError
from storage._factory import DEFAULT_STORAGE_URL, create_storage
from storage._memory import InMemoryStorage
from storage._protocol import Storage
from storage._records import (
    AuditEvent,
    ClaimRecord,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
    utcnow,
)

__all__ = [
    "DEFAULT_STORAGE_URL",
    "AuditEvent",
    "ClaimRecord",
    "InMemoryStorage",
    "MessageRecord",
    "SnapshotRecord",
    "SnapshotVersionConflict",
    "Storage",
    "StorageConfigError",
    "StorageError",
    "ThreadRecord",
    "create_storage",
    "utcnow",
]
