"""A batch of claims stays all or nothing against single claims from another OS process
(one SQLite file, PostgreSQL or Redis shared by both)."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.race_workers import race

pytestmark = pytest.mark.processes

WORKER = Path(__file__).with_name("batch_race_worker.py")
GROUPS = 60


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_a_batch_and_a_single_claim_from_another_process_one_wins_whole(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        by_batch, by_single = (
            set(w) for w in await race(WORKER, url, ("batch", "single"), str(GROUPS))
        )

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
