"""Contract: escalation steps are recorded once each, in order, never after the claim, and
several processes escalating the same call at once record each step exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from storage import EscalationRecord, Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.storage.records import at, claim, snapshot


def step(n: int, *, key: str = "call_1#0", run_id: str = "run-1") -> EscalationRecord:
    return EscalationRecord(
        run_id=run_id,
        key=key,
        step=n,
        approvers=[f"S{n}LEADS"] if n > 1 else [],
        notify=[f"U{n}", "S0ONCALL"],
        escalated_at=at(60 * n),
    )


async def test_steps_are_recorded_in_order_and_listed_by_key_and_step(storage: Storage) -> None:
    assert await storage.escalate(step(1))
    assert await storage.escalate(step(1, key="call_2#0"))
    assert await storage.escalate(step(2))

    found = await storage.list_escalations(["run-1", "run-2"])

    assert found == {"run-1": [step(1), step(2), step(1, key="call_2#0")], "run-2": []}
    assert await storage.list_escalations([]) == {}


async def test_a_step_happens_once_and_never_before_the_one_before_it(storage: Storage) -> None:
    assert not await storage.escalate(step(2))  # step 1 has not happened
    assert await storage.escalate(step(1))
    assert not await storage.escalate(step(1))  # again: refused
    assert not await storage.escalate(step(3))

    assert [e.step for e in (await storage.list_escalations(["run-1"]))["run-1"]] == [1]


async def test_nothing_is_escalated_once_the_call_is_claimed(storage: Storage) -> None:
    assert await storage.escalate(step(1))
    await storage.claim(claim("run-1", "call_1#0"))

    assert not await storage.escalate(step(2))
    assert [e.step for e in (await storage.list_escalations(["run-1"]))["run-1"]] == [1]


async def test_a_new_round_of_the_call_escalates_from_the_first_step(storage: Storage) -> None:
    assert await storage.escalate(step(1))
    assert await storage.escalate(step(1, key="call_1#1"))


async def test_concurrent_escalations_of_one_step_record_it_once(storage: Storage) -> None:
    wins = await asyncio.gather(*(storage.escalate(step(1)) for _ in range(20)))
    assert sum(wins) == 1


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_stores_on_one_server_record_each_step_once(backend: str, tmp_path: Path) -> None:
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as first,
        open_storage(url) as second,
    ):
        for n in (1, 2, 3):
            wins = await asyncio.gather(*(store.escalate(step(n)) for store in (first, second) * 5))
            assert sum(wins) == 1
        assert [e.step for e in (await second.list_escalations(["run-1"]))["run-1"]] == [1, 2, 3]


async def test_a_run_is_read_with_its_escalation_steps_in_one_call(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.escalate(step(1))
    await storage.escalate(step(1, key="call_2#0"))
    await storage.escalate(step(1, run_id="run-2"))
    await storage.claim(claim("run-1", "call_2#0"))

    record, claims, approvals, steps = await storage.load_run_and_escalations("run-1")

    assert (record, claims, approvals) == await storage.load_run("run-1")
    assert record is not None and [c.key for c in claims] == ["call_2#0"]
    assert steps == [step(1), step(1, key="call_2#0")]
    assert await storage.load_run_and_escalations("never") == (None, [], [], [])


async def test_prune_removes_the_steps_of_ended_runs_only(storage: Storage) -> None:
    await storage.save_snapshot(snapshot("run-1"))
    await storage.escalate(step(1))
    await storage.escalate(step(1, run_id="run-2"))  # run-2 has no snapshot: it ended

    report = await storage.prune(before=at(3600))

    expected = 0 if type(storage).__name__ == "RedisStorage" else 1  # Redis expires them
    assert report.escalations == expected
    found = await storage.list_escalations(["run-1", "run-2"])
    assert found["run-1"] == [step(1)]
    assert len(found["run-2"]) == 1 - expected
