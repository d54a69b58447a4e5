"""A batch of claims stays all or nothing against single claims from another OS process
(one SQLite file, PostgreSQL or Redis shared by both)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from storage import Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url

WORKER = Path(__file__).with_name("batch_race_worker.py")
GROUPS = 60


async def _start(url: str, name: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        url,
        name,
        str(GROUPS),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _won(process: asyncio.subprocess.Process) -> set[int]:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    return set(json.loads(stdout.decode().splitlines()[-1]))


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_a_batch_and_a_single_claim_from_another_process_one_wins_whole(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        workers = [await _start(url, name) for name in ("batch", "single")]
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
        by_batch, by_single = await asyncio.gather(*(_won(process) for process in workers))

        assert by_batch and by_single, "one worker won nothing: the processes did not overlap"
        assert by_batch.isdisjoint(by_single)
        assert by_batch | by_single == set(range(GROUPS))
        store: Storage
        async with open_storage(url) as store:
            claims = {c.key: c.decided_by for c in await store.list_claims("race")}
        for group in range(GROUPS):
            keys = [f"g{group}-{i}" for i in range(3)]
            if group in by_batch:
                assert [claims.get(k) for k in keys] == ["batch"] * 3
            else:  # the batch wrote nothing of this group
                assert [claims.get(k) for k in keys] == [None, "single", None]
