"""Restart, exactly-once and crash safety with REAL processes over shared storage (SPEC 3.4)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.backends import SHARED_BACKENDS, unique_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.processes, pytest.mark.slow]


class Worker:
    """Runs ``tests.agents.process_worker`` commands as separate OS processes."""

    def __init__(self, url: str, tmp_path: Path) -> None:
        self.url = url
        self.log = tmp_path / "executions.jsonl"
        self.env = {**os.environ, "EXEC_LOG": str(self.log), "PYTHONPATH": str(ROOT)}

    async def spawn(self, *args: str, **env: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.agents.process_worker",
            args[0],
            self.url,
            *args[1:],
            cwd=ROOT,
            env={**self.env, **env},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    async def run(self, *args: str, **env: str) -> dict[str, Any]:
        proc = await self.spawn(*args, **env)
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()[-3000:]
        return json.loads(out.decode().strip().splitlines()[-1])

    def events(self, kind: str) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in rows if r["event"] == kind]


@pytest.fixture(params=SHARED_BACKENDS)
async def worker(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Worker]:
    async with unique_url(request.param, tmp_path) as url:
        yield Worker(url, tmp_path)


@pytest.mark.parametrize("supervisor", ["0", "1"], ids=["agent", "supervisor"])
async def test_a_run_suspended_in_one_process_is_listed_approved_and_finished_by_another(
    worker: Worker, supervisor: str
) -> None:
    started = await worker.run("start", SUPERVISOR=supervisor)
    assert started["finish_reason"] == "suspended"
    handle = started["pending"][0]
    listed = await worker.run("list", SUPERVISOR=supervisor)
    assert listed["total"] == 1
    path = ["ops", "records"] if supervisor == "1" else ["ops"]
    assert listed["runs"][0]["calls"] == [[handle, "delete-record", {"id": "42"}, path]]
    done = await worker.run("approve", started["run_id"], handle, "U1", SUPERVISOR=supervisor)
    assert done == {"text": "Deleted 42.", "finish_reason": "stop"}
    assert len(worker.events("executed")) == 1
    assert (await worker.run("list", SUPERVISOR=supervisor))["total"] == 0
    again = await worker.run("approve", started["run_id"], handle, "U2", SUPERVISOR=supervisor)
    assert again["error"] == "APPROVAL_ALREADY_DECIDED" and again["decided_by"] == "U1"
    unknown = await worker.run("approve", "no-such-run", handle, "U2")
    assert unknown["error"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
    assert len(worker.events("executed")) == 1


async def test_a_run_is_declined_by_another_process_and_the_tool_never_runs(worker: Worker) -> None:
    started = await worker.run("start")
    done = await worker.run("decline", started["run_id"], "c1")
    assert done["finish_reason"] == "stop"
    assert worker.events("executed") == []


async def test_two_processes_racing_on_one_call_execute_it_exactly_once(
    worker: Worker, tmp_path: Path
) -> None:
    started = await worker.run("start")
    go = tmp_path / "go"
    procs = [
        await worker.spawn("approve", started["run_id"], "c1", f"U{i}", GO_FILE=str(go))
        for i in range(2)
    ]
    await asyncio.sleep(0.3)  # let both processes import and wait at the gate
    go.touch()
    outputs = []
    for proc in procs:
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()[-3000:]
        outputs.append(json.loads(out.decode().strip().splitlines()[-1]))
    winners = [o for o in outputs if "text" in o]
    losers = [o for o in outputs if o.get("error") == "APPROVAL_ALREADY_DECIDED"]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0]["decided_by"] in ("U0", "U1")
    assert len(worker.events("executed")) == 1


@pytest.mark.parametrize("idempotent", ["0", "1"], ids=["plain", "idempotent"])
async def test_a_process_killed_mid_execution_never_silently_runs_the_tool_twice(
    worker: Worker, idempotent: str
) -> None:
    started = await worker.run("start", LEASE="1")
    proc = await worker.spawn("hang", started["run_id"], IDEMPOTENT=idempotent, LEASE="1")
    for _ in range(2000):
        if worker.events("started"):
            break
        await asyncio.sleep(0.01)
    assert worker.events("started"), "the hanging tool never started"
    proc.send_signal(signal.SIGKILL)
    await proc.wait()

    # Restarted at once: the claim is taken over once its 1 s lease lapsed by one more lease.
    recovered = await worker.run("recover", IDEMPOTENT=idempotent, LEASE="1", WAIT="1")
    [result] = recovered["results"]
    assert result["text"] == "Recovered."
    if idempotent == "1":
        [retry] = worker.events("executed")
        assert retry["key"] == worker.events("started")[0]["key"]
        assert result["tool_results"] == [{"deleted": "42"}]
    else:
        assert worker.events("executed") == []
        assert result["tool_results"][0]["status"] == "interrupted"
    assert (await worker.run("recover", LEASE="1"))["results"] == []  # nothing left
