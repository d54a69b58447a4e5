"""``InMemoryStorage``'s escalation steps: a list per run, checked and written under its lock."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from storage._records import ClaimRecord, EscalationRecord


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
