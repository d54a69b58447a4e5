"""``agents.Runner``: tracked, bounded, drained; refuses work after close."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from agents import AgentError, Runner, RunnerClosed


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
    assert peak == 2 and runner.pending == 6
    release.set()
    await runner.drain()
    assert peak == 2


def test_at_least_one_slot_is_required() -> None:
    with pytest.raises(ValueError):
        Runner(max_concurrency=0)


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


async def test_close_cancels_what_outlives_the_grace_period_and_refuses_new_work() -> None:
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
    assert cancelled.is_set() and runner.pending == 0 and runner.closed
    with pytest.raises(RunnerClosed) as info:
        runner.submit(forever(), name="late")
    assert isinstance(info.value, AgentError)
    assert info.value.code == "AGENT_RUNNER_CLOSED" and info.value.name == "late"


async def test_close_waits_for_work_that_finishes_within_the_grace_period() -> None:
    runner = Runner()
    done: list[str] = []

    async def quick() -> None:
        await asyncio.sleep(0.01)
        done.append("quick")

    runner.submit(quick())
    await runner.close(grace_seconds=5)
    assert done == ["quick"]


async def test_jobs_filling_every_slot_still_get_the_agent_runs_they_wait_for() -> None:
    from agents import Agent
    from agents.models import ScriptedModel, reply
    from storage import InMemoryStorage

    runner = Runner(max_concurrency=2)
    agent = Agent(
        id="ops",
        model=ScriptedModel([reply(f"answer {n}") for n in range(6)]),
        storage=InMemoryStorage(),
        runner=runner,
    )
    answers: list[str] = []

    async def job(n: int) -> None:  # like a Slack listener: starts a run, waits for its answer
        stream = await agent.stream(f"question {n}")
        answers.append((await stream.result()).text)

    for n in range(6):
        runner.submit(job(n), name=f"job-{n}")
    async with asyncio.timeout(30):
        await runner.drain()
    assert sorted(answers) == [f"answer {n}" for n in range(6)]
