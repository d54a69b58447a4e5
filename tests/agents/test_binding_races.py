"""An edit that presents a call again and an approval of the call as shown, racing from two
OS processes on one store: exactly one of them wins; the other is refused and runs nothing."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agents import ToolCallApprovalChunk
from tests.agents.binding_race_worker import build_agent
from tests.backends import SHARED_BACKENDS, open_storage, unique_url

pytestmark = pytest.mark.processes

WORKER = Path(__file__).with_name("binding_race_worker.py")


async def _start(
    url: str, shown: ToolCallApprovalChunk, mode: str, log: Path
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(WORKER),
        url,
        shown.run_id,
        mode,
        str(log),
        shown.fingerprint,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _answer(process: asyncio.subprocess.Process) -> dict[str, Any]:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    answer: dict[str, Any] = json.loads(stdout.decode().splitlines()[-1])
    return answer


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_an_edit_racing_an_approval_of_the_shown_call_has_one_winner(
    backend: str, tmp_path: Path
) -> None:
    log = tmp_path / "refunds.log"
    async with unique_url(backend, tmp_path) as url:
        async with open_storage(url) as store:
            agent = build_agent(store, log, asks=True)
            stream = await agent.stream("refund order 49", requested_by="alex")
            chunks = [c async for c in stream.full_stream]
            [shown] = [c for c in chunks if isinstance(c, ToolCallApprovalChunk)]
        workers = [await _start(url, shown, mode, log) for mode in ("edit", "approve")]
        for process in workers:
            assert process.stdout is not None
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            if line.strip() != b"ready":
                _, stderr = await process.communicate()
                pytest.fail(f"worker did not start: {line!r} {stderr.decode()}")
        for process in workers:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
            await process.stdin.drain()
        edit, approve = await asyncio.gather(*(_answer(p) for p in workers))

        ran = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        async with open_storage(url) as store:
            pending = await build_agent(store, log).pending_call(
                run_id=shown.run_id, tool_call_id="c1"
            )
        if "refused" in edit:  # the approval won: the call ran as shown, once
            assert approve == {"mode": "approve", "finish": "stop"}
            assert ran == [{"order": 49, "amount": 300}] and pending is None
        else:  # the edit won: nothing ran, the edited call waits for a second person
            assert edit == {"mode": "edit", "finish": "suspended"}
            refused = ("APPROVAL_ALREADY_DECIDED", "APPROVAL_FINGERPRINT_MISMATCH")
            assert approve.get("refused") in refused, approve
            assert ran == []
            assert pending is not None and pending.args == {"order": 49, "amount": 1150}
            assert pending.approved_by == ["edit"]
