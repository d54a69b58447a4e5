"""A separate OS process racing for claims: ``python claim_race_worker.py URL WORKER KEYS``.

It opens the storage (migrating it if it is the first), prints ``ready``, waits for a line on
stdin, then claims ``race#0 .. race#KEYS-1`` of run ``race`` concurrently and prints the keys it
won as one JSON line. ``test_processes.py`` starts two and checks each key was won once.
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
        random.shuffle(order)
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

        won = [key for key in await asyncio.gather(*(one(k) for k in order)) if key]
        print(json.dumps(won), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
