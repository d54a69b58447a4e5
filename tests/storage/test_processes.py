"""Claims stay single-use across OS processes sharing one SQLite file, PostgreSQL or Redis.

Both workers start on a never-used store, so they also migrate it at the same moment.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from storage import Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url

WORKER = Path(__file__).with_name("claim_race_worker.py")
KEYS = 150


async def _start(url: str, name: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        url,
        name,
        str(KEYS),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _won(process: asyncio.subprocess.Process) -> set[str]:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return set(json.loads(stdout.decode().splitlines()[-1]))


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_processes_win_each_claim_exactly_once(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        workers = [await _start(url, name) for name in ("A", "B")]
        for process in workers:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            if line.strip() != b"ready":
                _, stderr = await process.communicate()
                pytest.fail(f"worker did not start: {line!r} {stderr.decode()}")
        for process in workers:  # both are ready: start them together
            assert process.stdin is not None
            process.stdin.write(b"go\n")
            await process.stdin.drain()
        won_a, won_b = await asyncio.gather(*(_won(process) for process in workers))

        assert won_a and won_b, "one worker won nothing: the processes did not overlap"

        assert won_a.isdisjoint(won_b)
        assert won_a | won_b == {f"race#{n}" for n in range(KEYS)}
        store: Storage
        async with open_storage(url) as store:
            claims = await store.list_claims("race")
        assert len(claims) == KEYS
        assert {c.key for c in claims if c.decided_by == "A"} == won_a
