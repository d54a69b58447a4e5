"""Two OS processes race for the last uses of one standing grant (one SQLite file, PostgreSQL
or Redis shared by both): exactly ``max_uses`` calls are approved by it, never one more."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import StateChange, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.race_workers import race
from tests.storage.test_grants import grant

pytestmark = pytest.mark.processes

WORKER = Path(__file__).with_name("grant_race_worker.py")
CALLS = 25
"""Calls each process makes; the grant allows 20 in all."""
MAX_USES = 20


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_processes_racing_for_a_grants_last_uses_get_exactly_max_uses(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        store: Storage
        async with open_storage(url) as store:
            far = grant().created_at.replace(year=2100)
            await store.commit(StateChange(grant=grant(max_uses=MAX_USES, expires_at=far)))
        won_a, won_b = await race(WORKER, url, ("a", "b"), str(CALLS))

        assert won_a and won_b, "one process won nothing: they did not overlap"
        assert won_a + won_b == MAX_USES
        async with open_storage(url) as store:
            stored = await store.get_grant("g1")
            claims = [*await store.list_claims("race-a"), *await store.list_claims("race-b")]
        assert stored is not None and stored.uses == MAX_USES
        assert len(claims) == MAX_USES  # a refused use wrote no claim
