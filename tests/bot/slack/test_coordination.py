"""In-process coordination of the Slack edge: per-thread locks and de-duplication marks.

(The background runner is ``agents.Runner``, tested in ``tests/agents/test_runner.py``; that
the bot serves on the agent's runner and closes it at shutdown is in ``tests/bot/test_main.py``.)
"""

from __future__ import annotations

import asyncio

from bot.coordination._dedupe import Deduper
from bot.coordination._locks import LocalThreadLocks
from storage import InMemoryStorage


async def test_thread_lock_serialises_one_thread_not_others() -> None:
    locks = LocalThreadLocks()
    order: list[str] = []
    gate = asyncio.Event()

    async def work(thread: str, name: str, wait: bool) -> None:
        async with locks.hold(thread):
            order.append(f"{name}-start")
            if wait:
                await gate.wait()
            order.append(f"{name}-end")

    first = asyncio.create_task(work("t1", "a", True))
    await asyncio.sleep(0)
    second = asyncio.create_task(work("t1", "b", False))
    other = asyncio.create_task(work("t2", "c", False))
    await asyncio.sleep(0)
    await other
    assert order == ["a-start", "c-start", "c-end"]
    gate.set()
    await asyncio.gather(first, second)
    assert order[3:] == ["a-end", "b-start", "b-end"]
    assert len(locks) == 0


async def test_dedupe_marks_events_and_messages_once() -> None:
    dedupe = Deduper(InMemoryStorage())
    assert await dedupe.first_event("Ev1") is True
    assert await dedupe.first_event("Ev1") is False
    assert await dedupe.first_event(None) is True
    assert await dedupe.first_message("T1", "C1", "1.0") is True
    assert await dedupe.first_message("T1", "C1", "1.0") is False
    assert await dedupe.first_message("T1", "C2", "1.0") is True
