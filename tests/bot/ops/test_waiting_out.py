"""``waiting_out``: work owed to a thread is tried again through an outage of the services it
names (one log line), and any other failure, or one past the deadline, is raised."""

from __future__ import annotations

import logging

import pytest

from bot.ops._outage import Outages, waiting_out
from storage import StorageUnavailable

pytestmark = pytest.mark.asyncio


def _down() -> StorageUnavailable:
    return StorageUnavailable("sqlite:///x", ConnectionError("refused"))


async def test_an_outage_of_a_named_service_is_waited_out_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures = [_down(), _down()]

    async def attempt() -> str:
        if failures:
            raise failures.pop()
        return "shown"

    outages = Outages()
    with caplog.at_level(logging.WARNING):
        assert await waiting_out(outages, attempt, services=("storage",), seconds=60) == "shown"
    assert outages.is_down("storage")  # recorded; the next answer of storage clears it
    assert len([r for r in caplog.records if "storage is unavailable" in r.message]) == 1


async def test_other_failures_and_other_services_are_raised_at_once() -> None:
    calls = 0

    async def broken() -> None:
        nonlocal calls
        calls += 1
        raise ValueError("a bug")

    with pytest.raises(ValueError):
        await waiting_out(Outages(), broken, services=("storage",), seconds=60)
    assert calls == 1

    async def storage_down() -> None:
        raise _down()

    with pytest.raises(StorageUnavailable):
        await waiting_out(Outages(), storage_down, services=("redis",), seconds=60)


async def test_past_the_deadline_the_outage_is_raised() -> None:
    async def storage_down() -> None:
        raise _down()

    with pytest.raises(StorageUnavailable):
        await waiting_out(Outages(), storage_down, services=("storage",), seconds=0)
