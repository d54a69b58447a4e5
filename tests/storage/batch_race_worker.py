"""A separate OS process racing batches against single claims:
``python batch_race_worker.py URL WORKER GROUPS``.

Like ``claim_race_worker.py``: opens the storage, prints ``ready``, waits for a line on stdin,
then worker ``batch`` commits one batch per group ``g`` (keys ``g<n>-0 .. g<n>-2`` of run
``race``) while worker ``single`` claims only ``g<n>-1`` of each; each prints the groups it won
as one JSON line. Each marks that it started (after its first attempt) and waits for the
other's mark, so the two overlap however loaded the machine is.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys

from storage import ClaimRecord, DecisionBatch, create_storage, utcnow


def _claim(key: str, worker: str) -> ClaimRecord:
    return ClaimRecord(
        run_id="race",
        key=key,
        tool_call_id=key,
        decision="approved",
        decided_by=worker,
        decided_at=utcnow(),
    )


async def main(url: str, worker: str, groups: int) -> None:
    store = create_storage(url)
    try:
        await store.get_value("warm-up")  # first use: runs the migrations
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        order = list(range(groups))
        if worker == "single":
            order.reverse()
        first, rest = order[0], order[1:]
        random.shuffle(rest)
        semaphore = asyncio.Semaphore(8)

        async def one(group: int) -> int | None:
            async with semaphore:
                if worker == "batch":
                    keys = [f"g{group}-{i}" for i in range(3)]
                    batch = DecisionBatch(claims=[_claim(k, worker) for k in keys])
                    won = await store.commit_batch(batch) is None
                else:
                    won = await store.claim(_claim(f"g{group}-1", worker)) is None
                return group if won else None

        won_first = await one(first)
        await store.add_if_absent(f"race-started:{worker}", "1", 300)
        other = "single" if worker == "batch" else "batch"
        async with asyncio.timeout(60):
            while await store.get_value(f"race-started:{other}") is None:  # noqa: ASYNC110 (another process)
                await asyncio.sleep(0.01)
        won = [g for g in await asyncio.gather(*(one(g) for g in rest)) if g is not None]
        if won_first is not None:
            won.append(won_first)
        print(json.dumps(won), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
