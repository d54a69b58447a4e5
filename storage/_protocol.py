"""The one ``Storage`` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from storage._change import ApprovalTally, BatchRefusal, DecisionBatch, StateChange
from storage._prune import PruneReport
from storage._records import (
    ApprovalRecord,
    AuditEvent,
    CardRecord,
    ClaimRecord,
    DueKey,
    EscalationRecord,
    GrantRecord,
    MessageRecord,
    OutboxEntry,
    SnapshotKey,
    SnapshotRecord,
    ThreadRecord,
)


@runtime_checkable
class Storage(Protocol):
    """Durable state of countersign: snapshots with atomic claims, memory, audit, key→value,
    and an edge's own records (where its cards are, its outbox).

    Every method is atomic on its own; ``claim`` is the primitive that makes decisions
    single-use across processes, and ``commit`` writes a whole state change of a run (claim,
    completions, snapshot, memory, audit) in one transaction.
    """

    # -- state changes ---------------------------------------------------------------------
    async def commit(self, change: StateChange) -> ClaimRecord | None:
        """Apply every part of ``change`` in one transaction, or none of it.

        Returns None when applied, or the stored claim (and writes nothing) when the key of
        ``change.claim`` or of one of ``change.claims`` was already claimed. Raises
        ``SnapshotVersionConflict`` when ``change.snapshot`` does not follow the stored
        version, ``KeyError`` when a completion names no claim, ``StaleLease`` when a fenced
        completion's owner or epoch is no longer the claim's, ``GrantUnavailable`` when one of
        ``change.grant_uses`` may not happen; each writes nothing.
        """
        ...

    async def commit_batch(self, batch: DecisionBatch) -> BatchRefusal | None:
        """Write every decision of ``batch`` in one transaction, or none of them.

        Returns None when applied, or the ``BatchRefusal`` of the first approval or claim that
        could not be written (its key claimed already, or the approver's second approval); then
        nothing at all was written: no approval, no claim, no audit event.
        """
        ...

    async def load_run(
        self, run_id: str
    ) -> tuple[SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord]]:
        """The snapshot, claims (as ``list_claims``) and approvals of a run, read together."""
        ...

    async def load_run_and_escalations(
        self, run_id: str
    ) -> tuple[
        SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord], list[EscalationRecord]
    ]:
        """``load_run`` and the run's escalation steps (as ``list_escalations``), read together
        (what a decision reads: one round trip)."""
        ...

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
        """Remove the snapshot of a finished run and its approvals (no error when absent)."""
        ...

    async def list_snapshots(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        decidable_only: bool = False,
    ) -> tuple[list[SnapshotRecord], int]:
        """Snapshots matching every given filter, newest ``suspended_at`` first, and the total.

        With ``decidable_only`` only snapshots with ``decidable=True`` are counted and paged.
        Every call counts the matches and pays for its ``offset``: to go through every stored
        run, use ``page_snapshots``.
        """
        ...

    async def page_snapshots(
        self, *, agent_id: str, after: SnapshotKey | None = None, limit: int = 100
    ) -> list[SnapshotRecord]:
        """Snapshots of ``agent_id`` in ``list_snapshots``'s order (newest ``suspended_at``
        first; on a tie, the greater ``run_id`` first, as the backend compares text): the first
        ``limit`` after the key ``after`` (the last page's last ``(suspended_at, run_id)``;
        None: from the newest).

        Read by key from the agent's index, with no offset and no count: a page costs its own
        rows however many are stored. Going page after page visits exactly once every run that
        stays where it is meanwhile, however many share a ``suspended_at``: a run deleted
        meanwhile shifts none of the others (under an offset, every later one moves up and one
        is passed over); a run stored, or saved again with a newer ``suspended_at``, meanwhile
        goes ahead of the key, where the next scan sees it.
        """
        ...

    # -- what is due (the sweep) -----------------------------------------------------------
    async def list_due(
        self,
        *,
        agent_id: str,
        until: datetime,
        after: DueKey | None = None,
        limit: int = 100,
    ) -> list[SnapshotRecord]:
        """Snapshots of ``agent_id`` whose ``due_at`` is at or before ``until``, ordered by
        ``(due_at, run_id)``: the first ``limit`` after the key ``after`` (the last page's last
        ``(due_at, run_id)``; None: from the start).

        Read from the due index, by key: a run not due is never read, and no page costs an
        offset or a count, however many runs are stored. A run added meanwhile behind the key
        is seen by the next pass, one ahead of it by this one; each run at most once a pass.
        """
        ...

    async def reschedule(self, run_id: str, *, version: int, due_at: datetime | None) -> bool:
        """Set the ``due_at`` of ``run_id``'s snapshot while it is still at ``version`` (the
        version is left as it is); False when the snapshot is gone, not decidable, or was saved
        again since (that save set its own ``due_at``)."""
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

    async def renew_lease(
        self, run_id: str, key: str, owner: str, lease_until: datetime, *, epoch: int = 0
    ) -> bool:
        """Extend ``owner``'s lease on a claim; False when it is not (or no longer) theirs.

        True only while the claim is still ``claimed`` and ``owner`` holds it at ``epoch`` (the
        check and the write are one atomic step): after a takeover the old holder's renewal is
        refused, even when the taker is the same ``owner``.
        """
        ...

    async def take_over_expired_claims(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[ClaimRecord]:
        """Atomically give ``owner`` up to ``limit`` claims whose lease ran out; return them.

        A claim is taken over while it is still ``claimed`` and its ``lease_until`` is before
        ``now`` or None (written without a lease). The claims come back with the new ``owner``,
        ``lease_until`` and ``epoch`` (one more than before: the old holder's renewals and
        fenced completions are refused from now on), oldest decision first; concurrent callers
        never get the same claim. A caller that grants a grace passes ``now`` minus the grace.
        """
        ...

    # -- approvals (quorum) ----------------------------------------------------------------
    async def add_approval(self, record: ApprovalRecord) -> ApprovalTally:
        """Record one approver's approval unless the key is claimed; return the tally.

        Atomic: an approver counts once per ``(run_id, key)`` (``added`` False on a repeat),
        and nothing is added once the key is claimed (the tally then carries the claim).
        """
        ...

    async def list_approvals(self, run_ids: Sequence[str]) -> dict[str, list[ApprovalRecord]]:
        """The approvals of several runs in one round trip, oldest first (none: ``[]``).

        Approvals are deleted with their run's snapshot: once the run ends, its claims
        remember the decisions and the audit log who approved.
        """
        ...

    # -- escalations -----------------------------------------------------------------------
    async def escalate(self, record: EscalationRecord) -> bool:
        """Record step ``record.step`` of a pending item; True when this call recorded it.

        Atomic, a compare-and-set on the step number: recorded only when the item's last step
        is ``record.step - 1`` (none for step 1) and its key is not claimed, so of several
        processes escalating the same item at once exactly one records each step.
        """
        ...

    async def list_escalations(self, run_ids: Sequence[str]) -> dict[str, list[EscalationRecord]]:
        """The escalation steps of several runs in one round trip, by key then step (none:
        ``[]``). Kept after the run ends, as its claims are (the audit says the same)."""
        ...

    # -- standing grants (SPEC 15) --------------------------------------------------------
    async def get_grant(self, grant_id: str) -> GrantRecord | None:
        """One grant (revoked, expired or used up ones too), or None."""
        ...

    async def list_grants(
        self,
        *,
        agent_id: str | None = None,
        tool_name: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
        active_at: datetime | None = None,
    ) -> list[GrantRecord]:
        """Grants matching every given filter, newest first (``storage._grants.listed``:
        ``thread_id`` with ``resource_id`` selects the grants that apply in that thread;
        ``active_at`` only those usable at that moment)."""
        ...

    async def count_grants(
        self, *, agent_id: str | None = None, active_at: datetime | None = None
    ) -> int:
        """How many grants ``list_grants(agent_id=..., active_at=...)`` would return, read from
        an index (the metrics' gauge; nothing is loaded)."""
        ...

    async def revoke_grant(
        self, grant_id: str, *, revoked_by: str | None, at: datetime
    ) -> GrantRecord | None:
        """Mark a grant revoked (atomically; no use after ``at`` happens, from any process) and
        return it; one revoked already is returned as it was; None when there is no such grant.
        """
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

    # -- an edge's records: cards and outbox -----------------------------------------------
    async def put_card(self, record: CardRecord, *, audit: Sequence[AuditEvent] = ()) -> None:
        """Create or replace the card of ``(run_id, tool_call_id)``, and append ``audit`` (the
        ``presented`` event) in the same transaction."""
        ...

    async def get_card(self, run_id: str, tool_call_id: str) -> CardRecord | None:
        """The card of a call, or None."""
        ...

    async def list_cards(self, run_id: str) -> list[CardRecord]:
        """The cards of a run, oldest ``posted_at`` first."""
        ...

    async def delete_card(self, run_id: str, tool_call_id: str) -> bool:
        """Remove the card of a call; True when there was one."""
        ...

    async def put_outbox(self, entry: OutboxEntry) -> None:
        """Keep ``entry`` (or replace the entry of its ``id``) until ``remove_outbox``."""
        ...

    async def list_outbox(
        self, *, due_at: datetime | None = None, limit: int | None = None
    ) -> list[OutboxEntry]:
        """Outbox entries, oldest ``created_at`` first; with ``due_at`` only those whose
        ``next_try_at`` is not after it."""
        ...

    async def take_outbox(
        self, entry_id: str, *, now: datetime, retry_at: datetime
    ) -> OutboxEntry | None:
        """Atomically take one entry to make it: when it exists and is due at ``now``, count
        the attempt, hold it until ``retry_at`` and return it; else None (made, or taken by
        another instance)."""
        ...

    async def remove_outbox(self, entry_id: str) -> bool:
        """Remove an entry once made; True when it was there (exactly one caller gets True)."""
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

    # -- retention -------------------------------------------------------------------------
    async def prune(self, *, before: datetime, audit: bool = False) -> PruneReport:
        """Delete what finished runs left behind before ``before``; return the counts.

        Completed claims and approvals of runs without a snapshot, failed (not decidable)
        runs last written before ``before`` that hold no ``claimed`` claim, card records of runs
        without a snapshot posted before ``before``, expired key→value entries, and with
        ``audit`` the audit events before ``before``. Never anything of a pending (decidable)
        run, a claim still ``claimed``, memory threads and messages, nor outbox entries.
        The rules in full: ``storage._prune``.

        Example:
            >>> await store.prune(before=utcnow() - timedelta(days=30))  # doctest: +SKIP
            PruneReport(snapshots=0, claims=12, approvals=0, cards=2, audit_events=0, values=3)
        """
        ...

    async def close(self) -> None:
        """Release what this backend opened (never clients it was given)."""
        ...
