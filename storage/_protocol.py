"""The one ``Storage`` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from storage._records import AuditEvent, ClaimRecord, MessageRecord, SnapshotRecord, ThreadRecord


@runtime_checkable
class Storage(Protocol):
    """Durable state of countersign: snapshots with atomic claims, memory, audit, key→value.

    Every method is atomic on its own; ``claim`` is the primitive that makes decisions
    single-use across processes.
    """

    # -- snapshots -------------------------------------------------------------------------
    async def save_snapshot(self, record: SnapshotRecord) -> None:
        """Create (``version == 1``) or replace (``version == stored + 1``) a run's snapshot.

        Raises ``SnapshotVersionConflict`` when the stored version is not ``record.version - 1``
        (or, for version 1, when the run already has a snapshot).
        """
        ...

    async def load_snapshot(self, run_id: str) -> SnapshotRecord | None:
        """The snapshot of ``run_id``, or None when there is none."""
        ...

    async def delete_snapshot(self, run_id: str) -> None:
        """Remove the snapshot of a finished run (no error when absent)."""
        ...

    async def list_snapshots(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> tuple[list[SnapshotRecord], int]:
        """Snapshots matching every given filter, newest ``suspended_at`` first, and the total."""
        ...

    # -- claims ----------------------------------------------------------------------------
    async def claim(self, record: ClaimRecord) -> ClaimRecord | None:
        """Atomically record a decision unless ``(run_id, key)`` already has one.

        Returns None when this call won, else the record that was there first.
        """
        ...

    async def complete_claim(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        """Mark a claim ``completed`` with the outcome of the work it authorised."""
        ...

    async def list_claims(self, run_id: str) -> list[ClaimRecord]:
        """Every claim of a run, oldest first (kept after the snapshot is deleted)."""
        ...

    async def list_claims_of_runs(self, run_ids: Sequence[str]) -> dict[str, list[ClaimRecord]]:
        """``list_claims`` of several runs in one round trip (runs without claims: ``[]``)."""
        ...

    async def list_unfinished_claims(self, claimed_before: datetime) -> list[ClaimRecord]:
        """Claims still ``claimed`` that were made before ``claimed_before`` (crash recovery)."""
        ...

    # -- memory ----------------------------------------------------------------------------
    async def save_thread(self, record: ThreadRecord) -> None:
        """Create or update a memory thread."""
        ...

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        """A memory thread, or None."""
        ...

    async def append_messages(self, records: Sequence[MessageRecord]) -> None:
        """Append messages to their threads, in order."""
        ...

    async def list_messages(
        self, thread_id: str, *, limit: int | None = None, exclude_run_id: str | None = None
    ) -> list[MessageRecord]:
        """The last ``limit`` messages of a thread (all when None), oldest first."""
        ...

    # -- audit -----------------------------------------------------------------------------
    async def append_audit(self, event: AuditEvent) -> None:
        """Append one event to the audit log."""
        ...

    async def query_audit(
        self,
        *,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        thread_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[AuditEvent]:
        """Audit events matching every given filter, oldest first."""
        ...

    # -- key → value with TTL --------------------------------------------------------------
    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        """Set ``key`` unless it holds an unexpired value; True when this call set it."""
        ...

    async def get_value(self, key: str) -> str | None:
        """The unexpired value of ``key``, or None."""
        ...

    async def delete_value(self, key: str) -> None:
        """Remove ``key`` (no error when absent)."""
        ...

    async def close(self) -> None:
        """Release what this backend opened (never clients it was given)."""
        ...
