"""``storage.patiently``: the one retry helper every layer waits out an outage with (jittered
exponential pauses, a deadline, one hook per failure retried and one when it answers again)."""

from __future__ import annotations

import pytest

from storage import StorageUnavailable, patiently


async def test_an_outage_is_waited_out_and_reported_each_time_then_once_back() -> None:
    failures = [
        StorageUnavailable("db", OSError("down")),
        StorageUnavailable("db", OSError("still down")),
    ]
    seen: list[str] = []
    back: list[bool] = []

    async def attempt() -> str:
        if failures:
            raise failures.pop(0)
        return "stored"

    done = await patiently(
        attempt,
        retry_on=lambda exc: isinstance(exc, StorageUnavailable),
        seconds=30,
        first=0.001,
        longest=0.002,
        on_outage=lambda exc: seen.append(str(exc)),
        on_back=lambda: back.append(True),
    )

    assert done == "stored" and len(seen) == 2 and back == [True]


async def test_a_failure_that_is_no_outage_is_raised_at_once() -> None:
    tries = 0

    async def attempt() -> None:
        nonlocal tries
        tries += 1
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        await patiently(attempt, retry_on=lambda exc: False, seconds=30, first=0.001)
    assert tries == 1


async def test_past_the_deadline_the_last_outage_is_raised() -> None:
    async def attempt() -> None:
        raise StorageUnavailable("db", OSError("gone for good"))

    with pytest.raises(StorageUnavailable, match="unreachable"):
        await patiently(
            attempt,
            retry_on=lambda exc: isinstance(exc, StorageUnavailable),
            seconds=0.01,
            first=0.001,
            longest=0.002,
        )


async def test_the_pauses_grow_and_are_jittered_so_instances_do_not_retry_in_step() -> None:
    left = 6
    pauses: list[float] = []

    async def attempt() -> str:
        nonlocal left
        left -= 1
        if left:
            raise StorageUnavailable("db", OSError("down"))
        return "stored"

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    runs = []
    for _ in range(2):
        left, pauses = 6, []
        await patiently(
            attempt,
            retry_on=lambda exc: isinstance(exc, StorageUnavailable),
            seconds=30,
            first=0.1,
            longest=5.0,
            sleep=sleep,
        )
        runs.append(pauses)

    for pauses in runs:
        assert len(pauses) == 5 and all(0.1 <= p <= 5.0 for p in pauses)
        assert pauses[-1] > pauses[0]  # growing
    assert runs[0] != runs[1]  # jittered: two instances do not come back in step
