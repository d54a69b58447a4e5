"""``RedisStorage``'s escalation steps: ``escalations:{run_id}``, a hash of
``[key, step]`` JSON → step JSON, written by one script (the compare-and-set on the step
number), expiring ``KEEP_SECONDS`` after its last step (longer than any approval's TTL)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from storage import _codec as codec
from storage._records import ApprovalRecord, ClaimRecord, EscalationRecord, SnapshotRecord
from storage.redis._claims import sorted_approvals, sorted_claims

KEEP_SECONDS = 31 * 86400
"""How long a run's steps are kept after its last one: past the longest TTL (30 days)."""

ESCALATION_METHODS = ("load_run_and_escalations", "escalate", "list_escalations")
"""The protocol methods of this half (each wrapped like the others for ``StorageUnavailable``)."""

_ESCALATE = """
-- KEYS: the run's claims hash, its escalations hash. ARGV: claim key, this step's field,
-- the step before's field ('' for step 1), the step's JSON, milliseconds to keep.
-- Returns 1 when the step was recorded, 0 when the key is claimed, the step before is missing
-- or this step is there already.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
if ARGV[3] ~= '' and redis.call('HEXISTS', KEYS[2], ARGV[3]) == 0 then
  return 0
end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[4]) == 0 then
  return 0
end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
"""


_LOAD_RUN_AND_ESCALATIONS = """
-- KEYS: the run's snapshot hash, claims hash, approvals hash, escalations hash. One read.
return {redis.call('HGET', KEYS[1], 'doc'), redis.call('HVALS', KEYS[2]),
        redis.call('HVALS', KEYS[3]), redis.call('HVALS', KEYS[4])}
"""


def _field(key: str, step: int) -> str:
    return json.dumps([key, step], separators=(",", ":"))


class RedisEscalations:
    """The escalation half of ``RedisStorage`` (on the client and prefix of ``RedisClaims``)."""

    _r: aioredis.Redis
    _p: str

    @functools.cached_property
    def _escalate_script(self) -> AsyncScript:
        return self._r.register_script(_ESCALATE)

    @functools.cached_property
    def _load_run_and_escalations_script(self) -> AsyncScript:
        return self._r.register_script(_LOAD_RUN_AND_ESCALATIONS)

    async def load_run_and_escalations(
        self, run_id: str
    ) -> tuple[
        SnapshotRecord | None, list[ClaimRecord], list[ApprovalRecord], list[EscalationRecord]
    ]:
        kinds = ("snap", "claims", "approvals", "escalations")
        doc, claims, approvals, steps = await self._load_run_and_escalations_script(
            keys=[f"{self._p}{kind}:{run_id}" for kind in kinds]
        )
        snapshot = None if doc is None else codec.loads(SnapshotRecord, doc)
        return snapshot, sorted_claims(claims), sorted_approvals(approvals), _sorted(steps)

    async def escalate(self, record: EscalationRecord) -> bool:
        if record.step < 1:
            return False
        before = _field(record.key, record.step - 1) if record.step > 1 else ""
        won = await self._escalate_script(
            keys=[f"{self._p}claims:{record.run_id}", f"{self._p}escalations:{record.run_id}"],
            args=[
                record.key,
                _field(record.key, record.step),
                before,
                codec.dumps(record),
                str(KEEP_SECONDS * 1000),
            ],
        )
        return int(won) == 1

    async def list_escalations(self, run_ids: Sequence[str]) -> dict[str, list[EscalationRecord]]:
        unique = list(dict.fromkeys(run_ids))
        async with self._r.pipeline(transaction=False) as pipe:
            for run_id in unique:
                pipe.hvals(f"{self._p}escalations:{run_id}")
            results = await pipe.execute()
        return {run_id: _sorted(docs) for run_id, docs in zip(unique, results, strict=True)}


def _sorted(docs: Sequence[str | bytes]) -> list[EscalationRecord]:
    """Stored steps, by key then step."""
    steps = (codec.loads(EscalationRecord, doc) for doc in docs)
    return sorted(steps, key=lambda e: (e.key, e.step))
