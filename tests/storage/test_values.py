"""Contract: key → value with a TTL (de-duplication of Slack retries and clicks)."""

from __future__ import annotations

import asyncio

from storage import Storage


async def test_first_add_wins_until_deleted(storage: Storage) -> None:
    assert await storage.add_if_absent("evt-1", "first", 60) is True
    assert await storage.add_if_absent("evt-1", "second", 60) is False
    assert await storage.get_value("evt-1") == "first"

    await storage.delete_value("evt-1")
    await storage.delete_value("evt-1")

    assert await storage.get_value("evt-1") is None
    assert await storage.add_if_absent("evt-1", "third", 60) is True
    assert await storage.get_value("evt-1") == "third"


async def test_concurrent_adds_have_exactly_one_winner(storage: Storage) -> None:
    results = await asyncio.gather(*(storage.add_if_absent("k", str(n), 60) for n in range(30)))

    assert results.count(True) == 1
    assert await storage.get_value("k") == str(results.index(True))


async def test_expired_value_reads_as_absent_and_can_be_added_again(storage: Storage) -> None:
    assert await storage.add_if_absent("short", "v1", 0.2) is True

    for _ in range(200):  # poll instead of one long sleep; the bound only stops a hang
        if await storage.get_value("short") is None:
            break
        await asyncio.sleep(0.05)

    assert await storage.get_value("short") is None
    assert await storage.add_if_absent("short", "v2", 60) is True
    assert await storage.get_value("short") == "v2"


async def test_unknown_key_reads_as_none(storage: Storage) -> None:
    assert await storage.get_value("never-set") is None
