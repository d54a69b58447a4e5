"""``InMemoryStorage``: the protocol in one process's memory (tests, demos; lost on exit)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from datetime import datetime

from storage._change import ApprovalTally, BatchRefusal, DecisionBatch, StateChange, fenced
from storage._errors import SnapshotVersionConflict
from storage._memory_claims import ClaimIndex
from storage._memory_edge import MemoryEdgeRecords
from storage._memory_standing import MemoryDue, MemoryEscalations, MemoryGrants, MemoryPages
from storage._prune import PruneReport
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


class InMemoryStorage(MemoryEdgeRecords, MemoryEscalations, MemoryGrants, MemoryDue, MemoryPages):
    """Everything in dicts guarded by one lock; ``memory://`` selects it.

    Example:
        >>> store = InMemoryStorage()
    """

    _claims: ClaimIndex

    def __init__(self) -> None:
        MemoryEdgeRecords.__init__(self)
        MemoryGrants.__init__(self)
        self._lock = asyncio.Lock()
        self._snapshots: dict[str, SnapshotRecord] = {}
        self._claims = ClaimIndex()
        self._threads: dict[str, ThreadRecord] = {}
        self._messages: dict[str, list[MessageRecord]] = {}
        self._audit: list[AuditEvent] = []
        self._values: dict[str, tuple[str, float]] = {}
        self._approvals: dict[str, list[ApprovalRecord]] = {}
        self._escalations: dict[str, list[EscalationRecord]] = {}

    # -- state changes ---------------------------------------------------------------------
    async def commit(self, change: StateChange) -> ClaimRecord | None:
        async with self._lock:  # every check before the first write: all or nothing
            for claim in change.every_claim:
                if (existing := self._claims.get((claim.run_id, claim.key))) is not None:
                    return existing
            for done in change.completions:
                held = self._claims.get((done.run_id, done.key))
                if held is None:
                    raise KeyError(f"no claim {done.key!r} on run {done.run_id!r} to complete")
                if done.owner is not None and (held.owner, held.epoch) != (done.owner, done.epoch):
                    raise fenced(done, held)
            if change.snapshot is not None:
                self._check_version(change.snapshot)
            if (unusable := self._grant_refusal(change)) is not None:
                raise unusable
            for claim in change.every_claim:
                self._claims[(claim.run_id, claim.key)] = claim
            for done in change.completions:
                self._complete(done.run_id, done.key, done.outcome)
            if change.snapshot is not None:
                self._snapshots[change.snapshot.run_id] = change.snapshot
            if change.delete_snapshot is not None:
                self._delete(change.delete_snapshot)
            if change.thread is not None:
                self._threads[change.thread.thread_id] = change.thread
            for message in change.messages:
                self._messages.setdefault(message.thread_id, []).append(message)
            self._audit.extend(change.audit)
            self._write_grants(change)
            return None

    async def commit_batch(self, batch: DecisionBatch) -> BatchRefusal | None:
        async with self._lock:  # every check before the first write: all or nothing
            for vote in batch.approvals:
                held = self._claims.get((vote.run_id, vote.key))
                mine = [a for a in self._approvals.get(vote.run_id, []) if a.key == vote.key]
                if held is not None or any(a.approver == vote.approver for a in mine):
                    approver = None if held is not None else vote.approver
                    return BatchRefusal(
                        run_id=vote.run_id, key=vote.key, claim=held, approver=approver
                    )
            for claim in batch.claims:
                held = self._claims.get((claim.run_id, claim.key))
                if held is not None:
                    return BatchRefusal(run_id=claim.run_id, key=claim.key, claim=held)
            for vote in batch.approvals:
                run = self._approvals.setdefault(vote.run_id, [])
                run.append(vote)
                run.sort(key=lambda a: (a.approved_at, a.key, a.approver))
            for claim in batch.claims:
                self._claims[(claim.run_id, claim.key)] = claim
            self._audit.extend(batch.audit)
            return None

    async def load_run(
        self, run_id: str
    ) -> tuple[SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord]]:
        async with self._lock:
            return (
                self._snapshots.get(run_id),
                await self.list_claims(run_id),
                list(self._approvals.get(run_id, [])),
            )

    async def load_run_and_escalations(
        self, run_id: str
    ) -> tuple[
        SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord], list[EscalationRecord]
    ]:
        async with self._lock:
            return (
                self._snapshots.get(run_id),
                await self.list_claims(run_id),
                list(self._approvals.get(run_id, [])),
                list(self._escalations.get(run_id, [])),
            )

    # -- snapshots -------------------------------------------------------------------------

    async def save_snapshot(self, record: SnapshotRecord) -> None:
        async with self._lock:
            self._check_version(record)
            self._snapshots[record.run_id] = record

    def _check_version(self, record: SnapshotRecord) -> None:
        current = self._snapshots.get(record.run_id)
        stored_version = current.version if current else 0
        if record.version < 1 or stored_version != record.version - 1:
            raise SnapshotVersionConflict(record.run_id, record.version - 1)

    async def load_snapshot(self, run_id: str) -> SnapshotRecord | None:
        return self._snapshots.get(run_id)

    async def delete_snapshot(self, run_id: str) -> None:
        async with self._lock:
            self._delete(run_id)

    def _delete(self, run_id: str) -> None:
        self._snapshots.pop(run_id, None)
        self._approvals.pop(run_id, None)

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
        found = [
            s
            for s in self._snapshots.values()
            if (s.decidable or not decidable_only)
            and (agent_id is None or s.agent_id == agent_id)
            and (thread_id is None or s.thread_id == thread_id)
            and (resource_id is None or s.resource_id == resource_id)
        ]
        found.sort(key=lambda s: (s.suspended_at, s.run_id), reverse=True)
        end = None if limit is None else offset + limit
        return found[offset:end], len(found)

    # -- claims ----------------------------------------------------------------------------
    async def claim(self, record: ClaimRecord) -> ClaimRecord | None:
        async with self._lock:
            existing = self._claims.get((record.run_id, record.key))
            if existing is not None:
                return existing
            self._claims[(record.run_id, record.key)] = record
            return None

    async def complete_claim(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        async with self._lock:
            self._complete(run_id, key, outcome)

    def _complete(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        existing = self._claims[(run_id, key)]
        self._claims[(run_id, key)] = dataclasses.replace(
            existing, status="completed", outcome=dict(outcome), completed_at=utcnow()
        )

    async def list_claims(self, run_id: str) -> list[ClaimRecord]:
        return sorted(self._claims.of_run(run_id), key=lambda c: c.decided_at)

    async def list_claims_of_runs(self, run_ids: Sequence[str]) -> dict[str, list[ClaimRecord]]:
        return {run_id: await self.list_claims(run_id) for run_id in run_ids}

    async def list_unfinished_claims(self, claimed_before: datetime) -> list[ClaimRecord]:
        found = [
            c
            for c in self._claims.values()
            if c.status == "claimed" and c.decided_at < claimed_before
        ]
        return sorted(found, key=lambda c: c.decided_at)

    async def renew_lease(
        self, run_id: str, key: str, owner: str, lease_until: datetime, *, epoch: int = 0
    ) -> bool:
        async with self._lock:
            held = self._claims.get((run_id, key))
            if held is None or held.status != "claimed":
                return False
            if held.owner != owner or held.epoch != epoch:  # taken over: the old holder lost it
                return False
            self._claims[(run_id, key)] = dataclasses.replace(held, lease_until=lease_until)
            return True

    async def take_over_expired_claims(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[ClaimRecord]:
        async with self._lock:
            expired = sorted(
                (
                    c
                    for c in self._claims.values()
                    if c.status == "claimed" and (c.lease_until is None or c.lease_until < now)
                ),
                key=lambda c: (c.decided_at, c.run_id, c.key),
            )[: max(limit, 0)]
            taken = [
                dataclasses.replace(c, owner=owner, lease_until=lease_until, epoch=c.epoch + 1)
                for c in expired
            ]
            for claim in taken:
                self._claims[(claim.run_id, claim.key)] = claim
            return taken

    # -- approvals -------------------------------------------------------------------------
    async def add_approval(self, record: ApprovalRecord) -> ApprovalTally:
        async with self._lock:
            claim = self._claims.get((record.run_id, record.key))
            run = self._approvals.setdefault(record.run_id, [])
            mine = [a for a in run if a.key == record.key]
            if claim is not None:
                return ApprovalTally(added=False, approvals=mine, claim=claim)
            if any(a.approver == record.approver for a in mine):
                return ApprovalTally(added=False, approvals=mine)
            run.append(record)
            run.sort(key=lambda a: (a.approved_at, a.key, a.approver))
            return ApprovalTally(added=True, approvals=[a for a in run if a.key == record.key])

    async def list_approvals(self, run_ids: Sequence[str]) -> dict[str, list[ApprovalRecord]]:
        return {run_id: list(self._approvals.get(run_id, [])) for run_id in run_ids}

    # -- memory ----------------------------------------------------------------------------
    async def save_thread(self, record: ThreadRecord) -> None:
        self._threads[record.thread_id] = record

    async def get_thread(self, thread_id: str) -> ThreadRecord | None:
        return self._threads.get(thread_id)

    async def append_messages(self, records: Sequence[MessageRecord]) -> None:
        async with self._lock:
            for record in records:
                self._messages.setdefault(record.thread_id, []).append(record)

    async def list_messages(
        self, thread_id: str, *, limit: int | None = None, exclude_run_id: str | None = None
    ) -> list[MessageRecord]:
        found = [
            m
            for m in self._messages.get(thread_id, [])
            if exclude_run_id is None or m.run_id != exclude_run_id
        ]
        return found if limit is None else found[-limit:] if limit > 0 else []

    # -- audit -----------------------------------------------------------------------------
    async def append_audit(self, event: AuditEvent) -> None:
        self._audit.append(event)

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
        found = [
            e
            for e in self._audit
            if (run_id is None or e.run_id == run_id)
            and (tool_call_id is None or e.tool_call_id == tool_call_id)
            and (thread_id is None or e.thread_id == thread_id)
            and (since is None or e.at >= since)
            and (until is None or e.at < until)
        ]
        found.sort(key=lambda e: e.at)
        return found if limit is None else found[:limit]

    # -- key → value -----------------------------------------------------------------------
    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        async with self._lock:
            if self._live_value(key) is not None:
                return False
            self._values[key] = (value, time.monotonic() + ttl_seconds)
            return True

    async def get_value(self, key: str) -> str | None:
        return self._live_value(key)

    async def delete_value(self, key: str) -> None:
        self._values.pop(key, None)

    def _live_value(self, key: str) -> str | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires <= time.monotonic():
            del self._values[key]
            return None
        return value

    # -- retention -------------------------------------------------------------------------
    async def prune(self, *, before: datetime, audit: bool = False) -> PruneReport:
        async with self._lock:
            in_flight = {run_id for (run_id, _), c in self._claims.items() if c.status == "claimed"}
            failed = [
                s.run_id
                for s in self._snapshots.values()
                if not s.decidable and s.suspended_at < before and s.run_id not in in_flight
            ]
            approvals = sum(len(self._approvals.get(run_id, [])) for run_id in failed)
            for run_id in failed:
                self._delete(run_id)
            for run_id, found in list(self._approvals.items()):
                if run_id not in self._snapshots:
                    kept = [a for a in found if a.approved_at >= before]
                    approvals += len(found) - len(kept)
                    if kept:
                        self._approvals[run_id] = kept
                    else:
                        del self._approvals[run_id]
            old_claims = [
                ids
                for ids, c in self._claims.items()
                if c.status == "completed"
                and (c.completed_at or c.decided_at) < before
                and c.run_id not in self._snapshots
            ]
            for ids in old_claims:
                del self._claims[ids]
            cards = self._prune_cards(before)
            steps = 0
            for run_id, taken in list(self._escalations.items()):
                if run_id not in self._snapshots:
                    kept_steps = [e for e in taken if e.escalated_at >= before]
                    steps += len(taken) - len(kept_steps)
                    if kept_steps:
                        self._escalations[run_id] = kept_steps
                    else:
                        del self._escalations[run_id]
            events = 0
            if audit:
                pending = {s.run_id for s in self._snapshots.values() if s.decidable}
                kept_events = [e for e in self._audit if e.at >= before or e.run_id in pending]
                events = len(self._audit) - len(kept_events)
                self._audit = kept_events
            now = time.monotonic()
            expired = [key for key, (_, expires) in self._values.items() if expires <= now]
            for key in expired:
                del self._values[key]
            grants = self._prune_grants(before)
            return PruneReport(
                grants=grants,
                snapshots=len(failed),
                claims=len(old_claims),
                approvals=approvals,
                cards=cards,
                escalations=steps,
                audit_events=events,
                values=len(expired),
            )

    async def close(self) -> None:
        return None
