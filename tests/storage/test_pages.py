"""An agent's runs page by page, by key (issue 35): ``page_snapshots`` visits each stored run
once, in ``list_snapshots``'s order, and a run that ends (or moves) between two pages makes the
scan skip no other, as it would under an offset."""

from __future__ import annotations

import pytest

from storage import SnapshotKey, SnapshotRecord, Storage
from tests.storage.records import snapshot


async def _scan(
    storage: Storage, *, limit: int, between: list[str] | None = None, agent_id: str = "ops"
) -> list[str]:
    """Every run of ``agent_id``, page after page by key; before each next page, the run named
    first in ``between`` ends (its snapshot is deleted)."""
    seen: list[str] = []
    after: SnapshotKey | None = None
    while True:
        page = await storage.page_snapshots(agent_id=agent_id, after=after, limit=limit)
        seen.extend(s.run_id for s in page)
        if len(page) < limit:
            return seen
        after = (page[-1].suspended_at, page[-1].run_id)
        if between:
            await storage.delete_snapshot(between.pop(0))


def _ids(records: list[SnapshotRecord]) -> list[str]:
    return [s.run_id for s in records]


async def test_pages_visit_every_run_once_newest_first_ties_included(storage: Storage) -> None:
    for n in range(23):  # five runs share each suspended_at: the run id orders them
        await storage.save_snapshot(snapshot(f"r{n:02d}", second=n // 5))
    await storage.save_snapshot(snapshot("billing-run", second=2, agent_id="billing"))

    listed, _ = await storage.list_snapshots(agent_id="ops")
    for limit in (1, 4, 5, 23, 100):
        assert await _scan(storage, limit=limit) == _ids(listed)
    assert _ids(listed)[:6] == ["r22", "r21", "r20", "r19", "r18", "r17"]
    assert await _scan(storage, limit=3, agent_id="billing") == ["billing-run"]
    assert await storage.page_snapshots(agent_id="ops", limit=0) == []
    assert await storage.page_snapshots(agent_id="nobody") == []


@pytest.mark.parametrize("share", [1, 5], ids=["distinct", "ties"])
async def test_a_run_ending_between_pages_makes_the_scan_skip_no_other(
    storage: Storage, share: int
) -> None:
    """Under an offset, each run gone from the pages already read moves the rest up by one,
    and the first run of the next page is never read."""
    runs = [f"r{n:02d}" for n in range(20)]
    for n, run_id in enumerate(runs):
        await storage.save_snapshot(snapshot(run_id, second=n // share))
    newest_first = runs[::-1]
    # before page 2: page 1's last run, the key itself (with ties: r15 shares its moment);
    # before page 3: a run page 1 read
    ending = [newest_first[3], newest_first[0]]

    seen = await _scan(storage, limit=4, between=list(ending))

    assert seen == newest_first  # every run once, in order: none skipped, none twice


async def test_a_run_saved_again_between_pages_is_neither_read_twice_nor_hides_another(
    storage: Storage,
) -> None:
    for n in range(12):
        await storage.save_snapshot(snapshot(f"r{n:02d}", second=n // 3))
    first = await storage.page_snapshots(agent_id="ops", limit=4)
    key = first[-1]
    # the key's run suspends again (newer): it moves ahead of the key, its place empties
    await storage.save_snapshot(snapshot(key.run_id, version=2, second=100))

    rest: list[str] = []
    after: SnapshotKey | None = (key.suspended_at, key.run_id)
    while after is not None:
        page = await storage.page_snapshots(agent_id="ops", after=after, limit=4)
        rest.extend(_ids(page))
        after = (page[-1].suspended_at, page[-1].run_id) if len(page) == 4 else None

    assert _ids(first) + rest == [f"r{n:02d}" for n in range(11, -1, -1)]
