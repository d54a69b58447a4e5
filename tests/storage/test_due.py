"""The due index (issue 35): ``list_due`` reads only the runs due by a moment, in pages by key,
and a run's due moment follows its snapshot (saved, rescheduled, decided, deleted)."""

from __future__ import annotations

from storage import SnapshotRecord, StateChange, Storage
from tests.storage.records import at, claim, snapshot


async def _all_due(
    storage: Storage, until_second: float, *, agent_id: str = "ops", limit: int = 100
) -> list[str]:
    """Every run due by then, page after page by key."""
    seen: list[str] = []
    after = None
    while True:
        page = await storage.list_due(
            agent_id=agent_id, until=at(until_second), after=after, limit=limit
        )
        seen.extend(s.run_id for s in page)
        if len(page) < limit:
            return seen
        after = (page[-1].due_at, page[-1].run_id)


async def test_only_runs_due_by_the_moment_are_read_in_due_order(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("later", due_at=at(60)))
    await storage.save_snapshot(snapshot("first", due_at=at(5)))
    await storage.save_snapshot(snapshot("second", due_at=at(10)))
    await storage.save_snapshot(snapshot("never", due_at=None))
    await storage.save_snapshot(snapshot("other-agent", agent_id="billing", due_at=at(1)))

    due = await storage.list_due(agent_id="ops", until=at(10))

    assert [s.run_id for s in due] == ["first", "second"]
    assert [s.due_at for s in due] == [at(5), at(10)]
    assert (await storage.load_snapshot("later")) == snapshot("later", due_at=at(60))
    assert await storage.list_due(agent_id="ops", until=at(4)) == []


async def test_a_run_saved_with_a_later_due_moment_moves(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("r1", due_at=at(5)))
    await storage.save_snapshot(snapshot("r1", version=2, due_at=at(50)))

    assert await storage.list_due(agent_id="ops", until=at(10)) == []
    assert [s.run_id for s in await storage.list_due(agent_id="ops", until=at(50))] == ["r1"]


async def test_reschedule_moves_the_run_only_at_its_version(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("r1", due_at=at(5)))

    assert await storage.reschedule("r1", version=1, due_at=at(40)) is True
    assert await storage.list_due(agent_id="ops", until=at(10)) == []
    stored = await storage.load_snapshot("r1")
    assert stored is not None and stored.due_at == at(40) and stored.version == 1

    await storage.save_snapshot(snapshot("r1", version=2, due_at=at(7)))
    assert await storage.reschedule("r1", version=1, due_at=at(90)) is False  # saved since
    assert [s.due_at for s in await storage.list_due(agent_id="ops", until=at(10))] == [at(7)]
    assert await storage.reschedule("gone", version=1, due_at=at(1)) is False

    assert await storage.reschedule("r1", version=2, due_at=None) is True  # nothing due
    assert await storage.list_due(agent_id="ops", until=at(10_000)) == []


async def test_a_decided_or_failed_run_leaves_the_index(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("decided", due_at=at(5)))
    await storage.save_snapshot(snapshot("failed", due_at=at(5)))
    await storage.save_snapshot(snapshot("deleted", due_at=at(5)))

    await storage.commit(
        StateChange(claim=claim("decided", "c1#0", second=6), delete_snapshot="decided")
    )
    await storage.save_snapshot(snapshot("failed", version=2, due_at=at(5), decidable=False))
    await storage.delete_snapshot("deleted")

    assert await storage.list_due(agent_id="ops", until=at(10_000)) == []
    failed = await storage.load_snapshot("failed")
    assert failed is not None and failed.due_at is None
    assert await storage.reschedule("failed", version=2, due_at=at(1)) is False


async def test_pages_by_key_see_every_due_run_once_while_runs_are_added(
    storage: Storage,
) -> None:
    for n in range(25):  # ties on due_at too: the run id orders them
        await storage.save_snapshot(snapshot(f"r{n:02d}", due_at=at(n // 3)))
    seen: list[str] = []
    after = None
    added = 0
    while True:
        page = await storage.list_due(agent_id="ops", until=at(100), after=after, limit=4)
        seen.extend(s.run_id for s in page)
        if len(page) < 4:
            break
        after = (page[-1].due_at, page[-1].run_id)
        # meanwhile: one run due behind the key (next pass), one ahead of it (this pass),
        # and the page's last run moved on (rescheduled past the key)
        await storage.save_snapshot(snapshot(f"behind{added}", due_at=at(-1)))
        await storage.save_snapshot(snapshot(f"ahead{added}", due_at=at(50 + added)))
        await storage.reschedule(page[-1].run_id, version=1, due_at=at(1_000))
        added += 1

    assert sorted(seen) == sorted(
        [f"r{n:02d}" for n in range(25)] + [f"ahead{n}" for n in range(added)]
    )
    assert len(seen) == len(set(seen))  # each once
    assert added >= 5


async def test_a_page_is_cut_at_the_limit_and_nothing_past_the_moment(storage: Storage) -> None:
    for n in range(10):
        await storage.save_snapshot(snapshot(f"r{n}", due_at=at(n)))

    assert await _all_due(storage, 6.5, limit=3) == [f"r{n}" for n in range(7)]
    assert await storage.list_due(agent_id="ops", until=at(100), limit=0) == []


def _due(record: SnapshotRecord | None) -> object:
    return None if record is None else record.due_at


async def test_due_at_round_trips_through_commit_and_load_run(storage: Storage) -> None:
    await storage.commit(StateChange(snapshot=snapshot("r1", due_at=at(12.5))))

    loaded, _, _ = await storage.load_run("r1")
    assert _due(loaded) == at(12.5)
    assert _due(await storage.load_snapshot("r1")) == at(12.5)
    listed, _ = await storage.list_snapshots(agent_id="ops")
    assert [s.due_at for s in listed] == [at(12.5)]
