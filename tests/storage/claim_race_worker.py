"""A separate OS process racing for claims: ``python claim_race_worker.py URL WORKER KEYS``.

It opens the storage (migrating it if it is the first), prints ``ready``, waits for a line on
stdin, then claims ``race#0 .. race#KEYS-1`` of run ``race`` and prints the keys it won as one
JSON line. ``test_processes.py`` starts two (``A`` and ``B``) and checks each key was won once.

So that the two really overlap however loaded the machine is, each first claims its own end of
the range (A the first key, B the last), marks that it has started, and waits for the other's
mark before racing for the rest concurrently, in shuffled order.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys

from storage import ClaimRecord, create_storage, utcnow


async def main(url: str, worker: str, keys: int) -> None:
    store = create_storage(url)
    try:
        await store.get_value("warm-up")  # first use: runs the migrations
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        order = [f"race#{n}" for n in range(keys)]
        if worker == "B":
            order.reverse()
        first, rest = order[0], order[1:]
        random.shuffle(rest)
        semaphore = asyncio.Semaphore(8)

        async def one(key: str) -> str | None:
            async with semaphore:
                record = ClaimRecord(
                    run_id="race",
                    key=key,
                    tool_call_id=None,
                    decision="approved",
                    decided_by=worker,
                    decided_at=utcnow(),
                )
                return key if await store.claim(record) is None else None

        won_first = await one(first)
        await store.add_if_absent(f"race-started:{worker}", "1", 300)
        other = "B" if worker == "A" else "A"
        async with asyncio.timeout(60):
            while await store.get_value(f"race-started:{other}") is None:  # noqa: ASYNC110 (another process)
                await asyncio.sleep(0.01)
        won = [key for key in await asyncio.gather(*(one(k) for k in rest)) if key]
        if won_first:
            won.append(won_first)
        print(json.dumps(won), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
