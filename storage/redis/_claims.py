"""``RedisClaims``: the claim, lease and approval half of ``RedisStorage``.

Claims are JSON in ``claims:{run_id}`` hashes; the Lua scripts never decode and re-encode that
JSON (Lua's ``cjson`` would reorder keys, turn ``[]`` into ``{}`` and round numbers). A lease
change is built here from the JSON just read and swapped in by a script only if the stored JSON
is still that one, else read again: compare-and-set. A completion is a ``commit``, whose script
rewrites only the fields after ``detail`` (see ``completed_in_place`` in the scripts).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis

from storage import _codec as codec
from storage._change import ApprovalTally, BatchRefusal, Completion, DecisionBatch, StateChange
from storage._records import ApprovalRecord, ClaimRecord
from storage.redis._change import (
    approval_field,
    batch_payload,
    batch_refusal,
    lease_score,
    member,
)
from storage.redis._scripts import (
    ADD_APPROVAL,
    CLAIM,
    COMMIT_BATCH,
    EXPIRED_CLAIMS,
    SWAP_CLAIMS,
)


def sorted_claims(docs: Sequence[Any]) -> list[ClaimRecord]:
    """Claim JSON documents as records, oldest decision first (as ``list_claims``)."""
    return sorted((codec.loads(ClaimRecord, d) for d in docs), key=lambda c: (c.decided_at, c.key))


def sorted_approvals(docs: Sequence[Any], key: str | None = None) -> list[ApprovalRecord]:
    """Approval JSON documents (of one claim ``key`` when given) as records, oldest first."""
    found = [codec.loads(ApprovalRecord, d) for d in docs]
    return sorted(
        (a for a in found if key is None or a.key == key),
        key=lambda a: (a.approved_at, a.key, a.approver),
    )


class RedisClaims:
    """Single-use claims, their leases and quorum approvals on one Redis client."""

    commit: Callable[[StateChange], Awaitable[ClaimRecord | None]]
    """``RedisStorage.commit``: a completion is a state change like any other."""

    def __init__(self, client: aioredis.Redis, key_prefix: str) -> None:
        self._r = client
        self._p = key_prefix
        self._claim = client.register_script(CLAIM)
        self._expired_claims = client.register_script(EXPIRED_CLAIMS)
        self._swap_claims = client.register_script(SWAP_CLAIMS)
        self._add_approval = client.register_script(ADD_APPROVAL)
        self._commit_batch = client.register_script(COMMIT_BATCH)

    async def commit_batch(self, batch: DecisionBatch) -> BatchRefusal | None:
        reply = await self._commit_batch(args=[self._p, batch_payload(self._p, batch)])
        return batch_refusal(batch, reply)

    # -- claims ----------------------------------------------------------------------------
    async def claim(self, record: ClaimRecord) -> ClaimRecord | None:
        existing = await self._claim(
            keys=[
                f"{self._p}claims:{record.run_id}",
                f"{self._p}claims:unfinished",
                f"{self._p}claims:leases",
            ],
            args=[
                record.key,
                codec.dumps(record),
                "1" if record.status == "claimed" else "0",
                codec.score(record.decided_at),
                member(record.run_id, record.key),
                lease_score(record.lease_until),
            ],
        )
        return None if existing is None else codec.loads(ClaimRecord, existing)

    async def complete_claim(self, run_id: str, key: str, outcome: dict[str, object]) -> None:
        await self.commit(
            StateChange(completions=[Completion(run_id=run_id, key=key, outcome=outcome)])
        )

    async def list_claims(self, run_id: str) -> list[ClaimRecord]:
        return sorted_claims(await self._r.hvals(f"{self._p}claims:{run_id}"))

    async def list_claims_of_runs(self, run_ids: Sequence[str]) -> dict[str, list[ClaimRecord]]:
        unique = list(dict.fromkeys(run_ids))
        async with self._r.pipeline(transaction=False) as pipe:
            for run_id in unique:
                pipe.hvals(f"{self._p}claims:{run_id}")
            results = await pipe.execute()
        return {run_id: sorted_claims(docs) for run_id, docs in zip(unique, results, strict=True)}

    async def list_unfinished_claims(self, claimed_before: datetime) -> list[ClaimRecord]:
        members = await self._r.zrangebyscore(
            f"{self._p}claims:unfinished", "-inf", f"({codec.score(claimed_before)}"
        )
        async with self._r.pipeline(transaction=False) as pipe:
            for one in members:
                run_id, key = json.loads(_text(one))
                pipe.hget(f"{self._p}claims:{run_id}", key)
            docs = await pipe.execute()
        found = [codec.loads(ClaimRecord, doc) for doc in docs if doc is not None]
        return [c for c in found if c.status == "claimed"]

    # -- leases ----------------------------------------------------------------------------
    async def renew_lease(
        self, run_id: str, key: str, owner: str, lease_until: datetime, *, epoch: int = 0
    ) -> bool:
        while True:  # compare-and-set: the swap writes only over the very JSON checked here
            stored = await self._r.hget(f"{self._p}claims:{run_id}", key)
            if stored is None:
                return False
            before = _text(stored)
            held = codec.loads(ClaimRecord, before)
            if held.status != "claimed" or (held.owner, held.epoch) != (owner, epoch):
                return False  # not (or no longer) theirs: taken over
            renewed = dataclasses.replace(held, lease_until=lease_until)
            if await self._swap([(held, before, renewed)]) == [True]:
                return True

    async def take_over_expired_claims(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int = 100
    ) -> list[ClaimRecord]:
        taken: list[ClaimRecord] = []
        while len(taken) < limit:
            found = await self._expired_claims(args=[self._p, codec.score(now), limit - len(taken)])
            if not found:
                break
            swaps = []
            for doc in map(_text, found[1::2]):
                held = codec.loads(ClaimRecord, doc)
                mine = dataclasses.replace(
                    held, owner=owner, lease_until=lease_until, epoch=held.epoch + 1
                )
                swaps.append((held, doc, mine))
            for (_, _, mine), won in zip(swaps, await self._swap(swaps), strict=True):
                if won:
                    taken.append(mine)
        return sorted(taken, key=lambda c: (c.decided_at, c.run_id, c.key))

    async def _swap(self, swaps: list[tuple[ClaimRecord, str, ClaimRecord]]) -> list[bool]:
        """Store each new claim whose stored JSON is still the one read; which were stored."""
        args: list[str] = [self._p]
        for held, before, after in swaps:
            args += [held.run_id, held.key, before, codec.dumps(after)]
            args += [member(held.run_id, held.key), lease_score(after.lease_until)]
        return [int(won) == 1 for won in await self._swap_claims(args=args)]

    # -- approvals -------------------------------------------------------------------------
    async def add_approval(self, record: ApprovalRecord) -> ApprovalTally:
        reply = await self._add_approval(
            keys=[f"{self._p}claims:{record.run_id}", f"{self._p}approvals:{record.run_id}"],
            args=[
                record.key,
                approval_field(record),
                codec.dumps(record),
            ],
        )
        kind = reply[0].decode() if isinstance(reply[0], bytes) else reply[0]
        if kind == "claimed":
            claim = codec.loads(ClaimRecord, reply[1])
            return ApprovalTally(
                added=False, approvals=sorted_approvals(reply[2:], record.key), claim=claim
            )
        return ApprovalTally(
            added=kind == "added", approvals=sorted_approvals(reply[1:], record.key)
        )

    async def list_approvals(self, run_ids: Sequence[str]) -> dict[str, list[ApprovalRecord]]:
        unique = list(dict.fromkeys(run_ids))
        async with self._r.pipeline(transaction=False) as pipe:
            for run_id in unique:
                pipe.hvals(f"{self._p}approvals:{run_id}")
            results = await pipe.execute()
        return {
            run_id: sorted_approvals(docs) for run_id, docs in zip(unique, results, strict=True)
        }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
