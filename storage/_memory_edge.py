"""``InMemoryStorage``'s edge records: cards by call, the outbox by id (in dicts, one lock)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import datetime

from storage._records import AuditEvent, CardRecord, OutboxEntry, SnapshotRecord


class MemoryEdgeRecords:
    """The card and outbox half of ``InMemoryStorage`` (its lock, audit list and snapshots)."""

    _lock: asyncio.Lock
    _audit: list[AuditEvent]
    _snapshots: dict[str, SnapshotRecord]

    def __init__(self) -> None:
        self._cards: dict[tuple[str, str], CardRecord] = {}
        self._outbox: dict[str, OutboxEntry] = {}

    # -- cards -----------------------------------------------------------------------------
    async def put_card(self, record: CardRecord, *, audit: Sequence[AuditEvent] = ()) -> None:
        async with self._lock:
            self._cards[(record.run_id, record.tool_call_id)] = record
            self._audit.extend(audit)

    async def get_card(self, run_id: str, tool_call_id: str) -> CardRecord | None:
        return self._cards.get((run_id, tool_call_id))

    async def list_cards(self, run_id: str) -> list[CardRecord]:
        found = [c for (run, _), c in self._cards.items() if run == run_id]
        return sorted(found, key=lambda c: (c.posted_at, c.tool_call_id))

    async def delete_card(self, run_id: str, tool_call_id: str) -> bool:
        async with self._lock:
            return self._cards.pop((run_id, tool_call_id), None) is not None

    def _prune_cards(self, before: datetime) -> int:
        """Delete the cards of runs without a snapshot posted before ``before`` (lock held)."""
        old = [
            ids
            for ids, card in self._cards.items()
            if card.posted_at < before and card.run_id not in self._snapshots
        ]
        for ids in old:
            del self._cards[ids]
        return len(old)

    # -- outbox ----------------------------------------------------------------------------
    async def put_outbox(self, entry: OutboxEntry) -> None:
        async with self._lock:
            self._outbox[entry.id] = entry

    async def list_outbox(
        self, *, due_at: datetime | None = None, limit: int | None = None
    ) -> list[OutboxEntry]:
        found = sorted(
            (e for e in self._outbox.values() if due_at is None or e.next_try_at <= due_at),
            key=lambda e: (e.created_at, e.id),
        )
        return found if limit is None else found[: max(limit, 0)]

    async def take_outbox(
        self, entry_id: str, *, now: datetime, retry_at: datetime
    ) -> OutboxEntry | None:
        async with self._lock:
            entry = self._outbox.get(entry_id)
            if entry is None or entry.next_try_at > now:
                return None
            taken = dataclasses.replace(entry, attempts=entry.attempts + 1, next_try_at=retry_at)
            self._outbox[entry_id] = taken
            return taken

    async def remove_outbox(self, entry_id: str) -> bool:
        async with self._lock:
            return self._outbox.pop(entry_id, None) is not None
