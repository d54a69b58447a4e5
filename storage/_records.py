"""The plain records every backend stores and returns.

Backends know nothing of agents: a snapshot's ``data`` and a claim's ``detail``/``outcome`` are
JSON documents whose meaning belongs to the ``agents`` package, as a card's ``shown`` and an
outbox entry's ``write`` belong to the edge (``bot``) that wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

JSON = dict[str, Any]

RuntimeAuditKind = Literal[
    "approval-requested",
    "suspended",
    "approval-recorded",
    "decided",
    "recovered",
    "executed",
    "not-executed",
    "refused",
    "escalated",
    "extended",
]
"""What the runtime (``agents``) audits: a call starts waiting for an approval
(``approval-requested``) or for data (``suspended``), one approval of several is counted
(``approval-recorded``), a decision is taken (``decided``), an unfinished claim is picked up after
a crash (``recovered``), a decided call ran (``executed``) or was not run (``not-executed``),
a decision a rule turned away (``refused``), an escalation step a pending call went through
while nobody decided it (``escalated``), and a pending call kept decidable for longer by someone
who may approve it (``extended``)."""

EdgeAuditKind = Literal["presented", "refused", "expired"]
"""What an edge (the Slack bot) audits itself: a card or question shown to people
(``presented``, where it is kept as a ``CardRecord``), a click or submit a rule turned away
(``refused``), a call the expiry job expired (``expired``)."""

AuditKind = Literal[RuntimeAuditKind, EdgeAuditKind]
"""Every kind of audit event: a closed set. An edge adds its kinds to ``EdgeAuditKind`` by
name; no writer makes one up."""


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
    due_at: datetime | None = None
    """The earliest moment something is due for the run (an expiry, a reminder, an escalation
    step of one of its pending calls), indexed: ``Storage.list_due`` reads the runs due by a
    moment, and no other. None: nothing is ever due (a run that is not decidable never is)."""

    def __post_init__(self) -> None:
        if not self.decidable and self.due_at is not None:
            object.__setattr__(self, "due_at", None)  # nothing is due for what nobody decides


DueKey = tuple[datetime, str]
"""Where a page of ``Storage.list_due`` ended: the last run's ``(due_at, run_id)``."""

SnapshotKey = tuple[datetime, str]
"""Where a page of ``Storage.page_snapshots`` ended: the last run's ``(suspended_at, run_id)``."""


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
    epoch: int = 0
    """The lease's fencing token: 0 when claimed, raised by one on every takeover. Storage
    refuses a renewal or a fenced ``Completion`` that names an epoch (or owner) no longer the
    claim's (``StaleLease``), so a takeover is final. Claims stored before epochs read as 0."""


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
class EscalationRecord:
    """One escalation step a pending item went through while nobody decided it (SPEC 15).

    One per ``(run_id, key, step)``: ``Storage.escalate`` records step N only after step N-1
    and only while the key is unclaimed, so each step happens once across processes.
    """

    run_id: str
    """The run of the pending item."""
    key: str
    """The claim key of the pending item (see ``ClaimRecord.key``): a call presented again
    (a new round) starts its escalation from the first step."""
    step: int
    """Which step (1 for the first)."""
    approvers: list[str] = field(default_factory=list)
    """Users and user groups who may approve the item from this step on (added to its rule's)."""
    notify: list[str] = field(default_factory=list)
    """Users and user groups the step mentioned."""
    escalated_at: datetime
    """When the step was recorded; a run's escalations are listed by key and step."""


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
    kind: AuditKind
    """What happened (``AuditKind``: ``approval-requested``, ``presented``, ``decided`` …)."""
    run_id: str | None = None
    tool_call_id: str | None = None
    thread_id: str | None = None
    agent_id: str | None = None
    actor: str | None = None
    """Who did it (a Slack user id, an API token name, ``system``)."""
    source: str | None = None
    """How: ``button``, ``modal``, ``api``, ``thread-reply``, ``python``, ``expiry`` …"""
    data: JSON = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class CardRecord:
    """Where an edge posted the card (or question) of one pending call, and what it showed.

    One per ``(run_id, tool_call_id)``: posting the call again replaces it (the newest card is
    the one to update). Kept in a table (key space) of its own, never in the audit log, so
    pruning audit never loses it; pruned with the claims of its ended run.
    """

    run_id: str
    """The run of the call."""
    tool_call_id: str
    """The call the card is about."""
    team: str
    """The Slack workspace of the card's thread."""
    channel: str
    """The channel of the card."""
    ts: str
    """The card's message ``ts`` (what ``chat.update`` needs)."""
    thread_ts: str
    """The thread the card was posted in."""
    posted_at: datetime
    """When it was posted; a run's cards are listed oldest first."""
    shown: JSON = field(default_factory=dict)
    """What the card showed (tool, arguments, rules …); its schema belongs to the edge."""


@dataclass(frozen=True, kw_only=True)
class OutboxEntry:
    """A write to an outside service (Slack) that failed and is still to make.

    Kept until it is made (then ``remove_outbox``); ``take_outbox`` hands one entry to one
    instance at a time. Never a memory message: memory retention never touches it.
    """

    id: str
    """Unique id of the write."""
    created_at: datetime
    """When it was kept; entries are listed oldest first."""
    write: JSON
    """What to write (method, channel, text, blocks …); its schema belongs to the edge."""
    attempts: int = 0
    """How many times an instance took it to make it."""
    next_try_at: datetime
    """Not to be taken before this (an instance making it holds it until then)."""


@dataclass(frozen=True, kw_only=True)
class GrantRecord:
    """One standing grant: later calls of ``tool_name`` at ``agent_path`` in its scope whose
    pinned arguments equal ``pins`` are approved by it, as decisions of ``granted_by``."""

    grant_id: str
    """Primary key."""
    agent_id: str
    """The agent whose runs it approves calls of (the top-level agent)."""
    tool_name: str
    """The tool it approves calls of (the inner tool for a sub-agent's call)."""
    agent_path: list[str]
    """The chain of agent ids from the top to the agent owning the tool."""
    thread_id: str | None
    """Scope ``thread``: only calls of this memory thread (None for scope ``resource``)."""
    resource_id: str | None
    """Scope ``resource``: calls of any thread of this resource (None for scope ``thread``)."""
    pins: JSON
    """The arguments a call must have, equal, to be approved (every argument of the approved
    call but the free ones)."""
    granted_by: str
    """Who granted it; each call it approves is recorded as their decision."""
    created_at: datetime
    expires_at: datetime
    """No use at or after this moment."""
    max_uses: int
    """The most calls it approves."""
    uses: int = 0
    """Calls it approved so far (counted in the claim's transaction)."""
    revoked_at: datetime | None = None
    """When it was revoked (None: not revoked); no use after it."""
    revoked_by: str | None = None
    """Who revoked it."""
    free_args: list[str] = field(default_factory=list)
    """The argument names that may vary (left out of ``pins``)."""
    run_id: str | None = None
    """The run of the approval that created it."""
    tool_call_id: str | None = None
    """The call whose approval created it."""
    rule: str | None = None
    """The key of the policy rule the grant was made under (its number and a digest of what it
    says, as the host's rules name it; None: no rule, the tool's own ``grants=True``). A later
    call falling under another rule is never approved by it."""
    definition_digest: str | None = None
    """``Tool.definition_digest`` of the tool when the grant was made: a call of the tool
    redefined since is never approved by it."""


@dataclass(frozen=True, kw_only=True)
class GrantUse:
    """One use of a grant, counted atomically with the claim it approves."""

    grant_id: str
    """The grant used."""
    at: datetime
    """When: refused at or after ``expires_at`` and after ``revoked_at``."""


R = TypeVar(
    "R",
    ApprovalRecord,
    AuditEvent,
    CardRecord,
    ClaimRecord,
    EscalationRecord,
    GrantRecord,
    MessageRecord,
    OutboxEntry,
    SnapshotRecord,
    ThreadRecord,
)
"""Any one of the record types (for functions that read a row or document back into one)."""
