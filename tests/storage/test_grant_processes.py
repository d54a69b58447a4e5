"""Two OS processes race for the last uses of one standing grant (one SQLite file, PostgreSQL
or Redis shared by both): exactly ``max_uses`` calls are approved by it, never one more."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from storage import StateChange, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.test_grants import grant

WORKER = Path(__file__).with_name("grant_race_worker.py")
CALLS = 25
"""Calls each process makes; the grant allows 20 in all."""
MAX_USES = 20


async def _start(url: str, name: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        url,
        name,
        str(CALLS),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _won(process: asyncio.subprocess.Process) -> int:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return int(json.loads(stdout.decode().splitlines()[-1]))


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_processes_racing_for_a_grants_last_uses_get_exactly_max_uses(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        store: Storage
        async with open_storage(url) as store:
            far = grant().created_at.replace(year=2100)
            await store.commit(StateChange(grant=grant(max_uses=MAX_USES, expires_at=far)))
        workers = [await _start(url, name) for name in ("a", "b")]
        for process in workers:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            if line.strip() != b"ready":
                _, stderr = await process.communicate()
                pytest.fail(f"worker did not start: {line!r} {stderr.decode()}")
        for process in workers:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
            await process.stdin.drain()
        won_a, won_b = await asyncio.gather(*(_won(process) for process in workers))

        assert won_a and won_b, "one process won nothing: they did not overlap"
        assert won_a + won_b == MAX_USES
        async with open_storage(url) as store:
            stored = await store.get_grant("g1")
            claims = [*await store.list_claims("race-a"), *await store.list_claims("race-b")]
        assert stored is not None and stored.uses == MAX_USES
        assert len(claims) == MAX_USES  # a refused use wrote no claim
