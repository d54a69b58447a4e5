"""The plain records every backend stores and returns.

Backends know nothing of agents: a snapshot's ``data`` and a claim's ``detail``/``outcome`` are
JSON documents whose meaning belongs to the ``agents`` package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

JSON = dict[str, Any]


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (every timestamp in storage is)."""
    return datetime.now(UTC)


@dataclass(frozen=True, kw_only=True)
class SnapshotRecord:
    """A suspended run: indexed columns plus the run's JSON document."""

    run_id: str
    """Primary key."""
    agent_id: str
    """The agent that owns the run."""
    thread_id: str | None
    """Memory thread of the run, indexed for listing."""
    resource_id: str | None
    """Resource (user, channel) of the run, indexed for listing."""
    suspended_at: datetime
    """When the run last suspended; listing is newest first."""
    version: int
    """Optimistic concurrency counter: 1 when created, +1 on every write."""
    data: JSON
    """The run's state; its schema belongs to ``agents``."""
    decidable: bool = True
    """Whether the run waits for a decision; ``list_snapshots(decidable_only=True)`` lists only
    these (a run that failed, or whose model turn errored, keeps its snapshot but is not)."""


@dataclass(frozen=True, kw_only=True)
class ClaimRecord:
    """A single-use decision on one pending item of a run (a tool call, or a step continuation)."""

    run_id: str
    key: str
    """Unique within the run, e.g. ``"call_1#0"`` (call id and suspension round)."""
    tool_call_id: str | None
    decision: str
    """``approved``, ``declined``, ``resumed``, ``expired``, ``continued`` …"""
    decided_by: str | None
    decided_at: datetime
    detail: JSON = field(default_factory=dict)
    """What came with the decision: reason, edited args, resume data, source."""
    status: str = "claimed"
    """``claimed`` until the work it authorised finished, then ``completed``."""
    outcome: JSON | None = None
    """The result of that work once completed."""
    completed_at: datetime | None = None
    """When the claim was completed."""
    owner: str | None = None
    """The instance running the authorised work (renews the lease while it runs)."""
    lease_until: datetime | None = None
    """Until when ``owner`` holds the claim; after it (or when None: a claim written before
    leases existed, or without one) any instance may take it over with
    ``take_over_expired_claims``."""


@dataclass(frozen=True, kw_only=True)
class ApprovalRecord:
    """One approver's approval of a pending item that needs several (the two-person rule)."""

    run_id: str
    """The run of the pending item."""
    key: str
    """The claim key the approvals count towards (see ``ClaimRecord.key``)."""
    approver: str
    """Who approved; each approver counts once per ``(run_id, key)``."""
    approved_at: datetime
    """When; approvals are listed oldest first."""


@dataclass(frozen=True, kw_only=True)
class ThreadRecord:
    """A memory thread."""

    thread_id: str
    resource_id: str | None
    created_at: datetime
    updated_at: datetime
    metadata: JSON = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class MessageRecord:
    """One message of a memory thread; ``content`` is a JSON document owned by ``agents``."""

    id: str
    thread_id: str
    resource_id: str | None
    run_id: str | None
    role: str
    content: JSON
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class AuditEvent:
    """One line of the append-only audit log."""

    id: str
    at: datetime
    kind: str
    """``approval-requested``, ``presented``, ``decided``, ``executed``, ``expired`` …"""
    run_id: str | None = None
    tool_call_id: str | None = None
    thread_id: str | None = None
    agent_id: str | None = None
    actor: str | None = None
    """Who did it (a Slack user id, an API token name, ``system``)."""
    source: str | None = None
    """How: ``button``, ``modal``, ``api``, ``thread-reply``, ``python``, ``expiry`` …"""
    data: JSON = field(default_factory=dict)


R = TypeVar(
    "R", ApprovalRecord, AuditEvent, ClaimRecord, MessageRecord, SnapshotRecord, ThreadRecord
)
"""Any one of the record types (for functions that read a row or document back into one)."""
