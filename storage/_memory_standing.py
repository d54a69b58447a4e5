"""``InMemoryStorage``'s records of what happens while a call waits (SPEC 15): standing grants
(a dict by id), escalation steps (a list per run) and when each run is next due (read off its
snapshot), under the store's one lock; and an agent's runs page by page, by key."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import datetime

from storage._change import StateChange
from storage._errors import GrantUnavailable
from storage._grants import ended_before, listed, newest_first, refusal, revoked, used
from storage._records import (
    ClaimRecord,
    DueKey,
    EscalationRecord,
    GrantRecord,
    SnapshotKey,
    SnapshotRecord,
)


class MemoryGrants:
    """The grant half of ``InMemoryStorage`` (its lock)."""

    _lock: asyncio.Lock

    def __init__(self) -> None:
        self._grants: dict[str, GrantRecord] = {}

    def _grant_refusal(self, change: StateChange) -> GrantUnavailable | None:
        """Why one of ``change``'s grant uses may not happen, each counting the ones before it
        (checked under the lock, before writing)."""
        counted: dict[str, GrantRecord] = {}
        for use in change.grant_uses:
            record = counted.get(use.grant_id) or self._grants.get(use.grant_id)
            if (why := refusal(record, use)) is not None or record is None:
                return why
            counted[use.grant_id] = used(record)
        return None

    def _write_grants(self, change: StateChange) -> None:
        """Store ``change``'s new grant and count its uses (after ``_grant_refusal``)."""
        if change.grant is not None:
            self._grants[change.grant.grant_id] = change.grant
        for use in change.grant_uses:
            self._grants[use.grant_id] = used(self._grants[use.grant_id])

    async def get_grant(self, grant_id: str) -> GrantRecord | None:
        return self._grants.get(grant_id)

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
        found = [
            g
            for g in self._grants.values()
            if listed(
                g,
                agent_id=agent_id,
                tool_name=tool_name,
                thread_id=thread_id,
                resource_id=resource_id,
                granted_by=granted_by,
                active_at=active_at,
            )
        ]
        return newest_first(found)

    async def count_grants(
        self, *, agent_id: str | None = None, active_at: datetime | None = None
    ) -> int:
        return len(await self.list_grants(agent_id=agent_id, active_at=active_at))

    def _prune_grants(self, before: datetime) -> int:
        """Delete the grants ``ended_before`` the cutoff (under the caller's lock)."""
        gone = [g.grant_id for g in self._grants.values() if ended_before(g, before)]
        for grant_id in gone:
            del self._grants[grant_id]
        return len(gone)

    async def revoke_grant(
        self, grant_id: str, *, revoked_by: str | None, at: datetime
    ) -> GrantRecord | None:
        async with self._lock:
            record = self._grants.get(grant_id)
            if record is None:
                return None
            self._grants[grant_id] = revoked(record, by=revoked_by, at=at)
            return self._grants[grant_id]


class MemoryEscalations:
    """The escalation half of ``InMemoryStorage`` (its lock and claims)."""

    _lock: asyncio.Lock
    _claims: dict[tuple[str, str], ClaimRecord]
    _escalations: dict[str, list[EscalationRecord]]
    """Steps by run id, in key and step order (made by ``InMemoryStorage.__init__``)."""

    async def escalate(self, record: EscalationRecord) -> bool:
        async with self._lock:
            if (record.run_id, record.key) in self._claims:
                return False
            run = self._escalations.setdefault(record.run_id, [])
            last = max((e.step for e in run if e.key == record.key), default=0)
            if record.step != last + 1:
                return False
            run.append(record)
            run.sort(key=lambda e: (e.key, e.step))
            return True

    async def list_escalations(self, run_ids: Sequence[str]) -> dict[str, list[EscalationRecord]]:
        return {run_id: list(self._escalations.get(run_id, [])) for run_id in run_ids}


class MemoryDue:
    """The due half of ``InMemoryStorage`` (its lock and snapshots): a scan of the dict, which
    holds one process's runs (the server backends read an index)."""

    _lock: asyncio.Lock
    _snapshots: dict[str, SnapshotRecord]

    async def list_due(
        self,
        *,
        agent_id: str,
        until: datetime,
        after: DueKey | None = None,
        limit: int = 100,
    ) -> list[SnapshotRecord]:
        due = sorted(
            (
                ((s.due_at, s.run_id), s)
                for s in self._snapshots.values()
                if s.agent_id == agent_id and s.due_at is not None and s.due_at <= until
            ),
            key=lambda pair: pair[0],
        )
        return [s for key, s in due if after is None or key > after][: max(limit, 0)]

    async def reschedule(self, run_id: str, *, version: int, due_at: datetime | None) -> bool:
        async with self._lock:
            stored = self._snapshots.get(run_id)
            if stored is None or stored.version != version or not stored.decidable:
                return False
            self._snapshots[run_id] = dataclasses.replace(stored, due_at=due_at)
            return True


class MemoryPages:
    """``page_snapshots`` of ``InMemoryStorage`` (its snapshots): a scan of the dict, which holds
    one process's runs (the server backends read an index)."""

    _snapshots: dict[str, SnapshotRecord]

    async def page_snapshots(
        self, *, agent_id: str, after: SnapshotKey | None = None, limit: int = 100
    ) -> list[SnapshotRecord]:
        found = sorted(
            (
                ((s.suspended_at, s.run_id), s)
                for s in self._snapshots.values()
                if s.agent_id == agent_id
            ),
            key=lambda pair: pair[0],
            reverse=True,
        )
        return [s for key, s in found if after is None or key < after][: max(limit, 0)]
