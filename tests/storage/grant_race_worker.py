"""A separate OS process racing for the last uses of one standing grant:
``python grant_race_worker.py URL WORKER CALLS``.

Like ``batch_race_worker.py``: opens the storage, prints ``ready``, waits for a line on stdin,
then claims ``CALLS`` calls of run ``race-<WORKER>``, each approved by a use of grant ``g1``
(made by the test); prints how many uses it won as one JSON line. Each marks that it started
(after its first attempt) and waits for the other's mark, so the two overlap.
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import timedelta

from storage import (
    ClaimRecord,
    GrantUnavailable,
    GrantUse,
    StateChange,
    create_storage,
    utcnow,
)


async def main(url: str, worker: str, calls: int) -> None:
    store = create_storage(url)
    try:
        await store.get_value("warm-up")
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        semaphore = asyncio.Semaphore(8)

        async def one(n: int) -> bool:
            now = utcnow()
            change = StateChange(
                claim=ClaimRecord(
                    run_id=f"race-{worker}",
                    key=f"c{n}#0",
                    tool_call_id=f"c{n}",
                    decision="approved",
                    decided_by="U1",
                    decided_at=now,
                    detail={"source": "grant", "grant_id": "g1"},
                    owner=worker,
                    lease_until=now + timedelta(seconds=60),
                ),
                grant_uses=[GrantUse(grant_id="g1", at=now)],
            )
            async with semaphore:
                try:
                    return await store.commit(change) is None
                except GrantUnavailable:
                    return False

        won = [await one(0)]
        await store.add_if_absent(f"race-started:{worker}", "1", 300)
        other = "b" if worker == "a" else "a"
        async with asyncio.timeout(60):
            while await store.get_value(f"race-started:{other}") is None:  # noqa: ASYNC110 (another process)
                await asyncio.sleep(0.01)
        won += await asyncio.gather(*(one(n) for n in range(1, calls)))
        print(json.dumps(sum(won)), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
