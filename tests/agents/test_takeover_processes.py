"""A takeover is final, with REAL processes (SPEC 3.4): the owner of a running tool is paused
(SIGSTOP) past its lease, another process takes the call over and finishes it, then the old
owner wakes up (SIGCONT) and finishes its tool too. Exactly one outcome reaches storage and the
model: the new owner's; the old owner abandons its run and tells nobody."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from tests.agents.test_restart_processes import Worker, worker  # noqa: F401
from tests.backends import open_storage

pytestmark = [pytest.mark.processes, pytest.mark.slow]


@pytest.mark.parametrize("idempotent", ["1", "0"], ids=["idempotent", "plain"])
async def test_an_owner_paused_past_its_lease_wakes_up_to_a_final_takeover(
    worker: Worker,  # noqa: F811
    idempotent: str,
    tmp_path: Path,
) -> None:
    started = await worker.run("start", LEASE="1")
    run_id = started["run_id"]
    release = tmp_path / "release"
    owner = await worker.spawn(
        "approve", run_id, "c1", "U1", IDEMPOTENT=idempotent, LEASE="1", BLOCK_UNTIL=str(release)
    )
    async with asyncio.timeout(60):
        while not worker.events("started"):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    owner.send_signal(signal.SIGSTOP)  # a long GC, a frozen VM: no renewal, no write
    try:
        recovered = await worker.run("recover", IDEMPOTENT=idempotent, LEASE="1", WAIT="1")
    finally:
        release.touch()
        owner.send_signal(signal.SIGCONT)  # ... and it finishes its tool after all
    out, err = await owner.communicate()
    assert owner.returncode == 0, err.decode()[-3000:]
    woken = json.loads(out.decode().strip().splitlines()[-1])

    assert woken == {"text": "", "finish_reason": "abandoned"}
    [result] = recovered["results"]
    assert result["text"] == "Recovered."
    async with open_storage(worker.url) as store:
        snapshot, [claim], _ = await store.load_run(run_id)
        audit = await store.query_audit(run_id=run_id)
    executed = [e for e in audit if e.kind == "executed"]
    assert snapshot is None and claim.status == "completed" and claim.epoch == 1
    assert len(executed) == 1  # one outcome, the new owner's
    assert len(worker.events("model")) == 1  # the model was told once
    [paused] = worker.events("started")
    if idempotent == "1":
        assert claim.outcome is not None and claim.outcome["status"] == "ok"
        assert result["tool_results"] == [{"deleted": "42"}]
        ran = worker.events("executed")  # retried by the new owner, finished by the old
        assert len(ran) == 2 and paused["pid"] in {e["pid"] for e in ran}
        assert {e["key"] for e in ran} == {paused["key"]}  # the same idempotency key
    else:
        assert claim.outcome is not None and claim.outcome["status"] == "interrupted"
        assert result["tool_results"][0]["status"] == "interrupted"
        assert [e["pid"] for e in worker.events("executed")] == [paused["pid"]]  # not re-run
    assert executed[0].data["status"] == claim.outcome["status"]
