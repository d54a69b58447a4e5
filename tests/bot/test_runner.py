"""The background runner: tracked, bounded, drained; per-thread locks; de-duplication."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from bot import Runner, RunnerClosed
from bot.slack._dedupe import Deduper
from bot.slack._locks import LocalThreadLocks
from storage import InMemoryStorage


async def test_drain_waits_for_jobs_and_the_jobs_they_start() -> None:
    runner = Runner()
    done: list[str] = []
    gate = asyncio.Event()

    async def child() -> None:
        await gate.wait()
        done.append("child")

    async def parent() -> None:
        runner.submit(child(), name="child")
        done.append("parent")

    runner.submit(parent(), name="parent")
    gc.collect()
    asyncio.get_running_loop().call_soon(gate.set)
    await runner.drain()
    assert done == ["parent", "child"]
    assert runner.pending == 0


async def test_concurrency_is_bounded() -> None:
    runner = Runner(max_concurrency=2)
    running = 0
    peak = 0
    release = asyncio.Event()

    async def job() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1

    for _ in range(6):
        runner.submit(job())
    for _ in range(5):
        await asyncio.sleep(0)
    assert peak == 2
    release.set()
    await runner.drain()
    assert peak == 2


async def test_a_failing_job_is_logged_and_does_not_stop_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runner = Runner()
    done: list[int] = []

    async def boom() -> None:
        raise RuntimeError("boom")

    async def fine() -> None:
        done.append(1)

    with caplog.at_level(logging.ERROR):
        runner.submit(boom(), name="boom")
        runner.submit(fine())
        await runner.drain()
    assert done == [1]
    assert "background job boom failed" in caplog.text


async def test_close_cancels_what_outlives_the_grace_period() -> None:
    runner = Runner()
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    runner.submit(forever())
    await asyncio.sleep(0)
    await runner.close(grace_seconds=0.01)
    assert cancelled.is_set() and runner.pending == 0
    with pytest.raises(RunnerClosed):
        runner.submit(forever())


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
