"""Claims stay single-use across OS processes sharing one SQLite file, PostgreSQL or Redis.

Both workers start on a never-used store, so they also migrate it at the same moment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.race_workers import race

pytestmark = pytest.mark.processes

WORKER = Path(__file__).with_name("claim_race_worker.py")
KEYS = 150


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_processes_win_each_claim_exactly_once(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        won_a, won_b = (set(w) for w in await race(WORKER, url, ("A", "B"), str(KEYS)))

        assert won_a and won_b, "one worker won nothing: the processes did not overlap"

        assert won_a.isdisjoint(won_b)
        assert won_a | won_b == {f"race#{n}" for n in range(KEYS)}
        store: Storage
        async with open_storage(url) as store:
            claims = await store.list_claims("race")
        assert len(claims) == KEYS
        assert {c.key for c in claims if c.decided_by == "A"} == won_a
