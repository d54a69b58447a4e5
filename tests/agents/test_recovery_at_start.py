"""The start-up look for runs whose claim completed but whose snapshot was never updated (data
written before one transaction covered both): it reads every stored run of the agent, so it
runs once per store, a page at a time by key (never by offset: a run that ends meanwhile must not
hide another), not at every start of every instance."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.deciding._recovery import _SCAN_PAGE
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import ClaimRecord, Completion, StateChange, Storage, utcnow
from tests.backends import storage, storage_url  # noqa: F401
from tests.counting import CountingStorage
from tools import ToolContext, create_tool


class Target(BaseModel):
    id: str


def _agent(store: Any, model: ScriptedModel, runs: list[str]) -> Agent:
    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        runs.append(input.id)
        return {"deleted": input.id}

    return Agent(
        id="ops",
        model=model,
        tools=[
            create_tool(
                id="delete-record",
                description="Delete a record",
                input_schema=Target,
                execute=delete,
                require_approval=True,
            )
        ],
        storage=store,
        memory=Memory(storage=store),
    )


async def _completed_but_not_applied(store: Storage) -> str:
    """A run waiting on ``delete-record`` whose claim was completed (the tool ran) by a process
    that died before it stored the run's next snapshot."""
    waiting = _agent(store, ScriptedModel([call("delete-record", {"id": "r1"})]), [])
    result = await waiting.generate("delete r1", thread_id="t1")
    assert result.finish_reason == "suspended"
    [pending] = result.tool_calls
    key = f"{pending.tool_call_id}#0"
    now = utcnow()
    claim = ClaimRecord(
        run_id=result.run_id,
        key=key,
        tool_call_id=pending.tool_call_id,
        decision="approved",
        decided_by="U1",
        decided_at=now,
        owner="gone",
        lease_until=now,
    )
    assert await store.claim(claim) is None
    outcome = {"status": "ok", "result": {"deleted": "r1"}, "reason": None}
    done = Completion(run_id=result.run_id, key=key, outcome=outcome, owner="gone")
    await store.commit(StateChange(completions=[done]))
    return result.run_id


async def test_the_first_start_finishes_such_a_run_and_later_starts_read_no_stored_run(
    storage: Storage,  # noqa: F811
) -> None:
    run_id = await _completed_but_not_applied(storage)
    ran: list[str] = []
    counted = CountingStorage(storage)

    first = _agent(counted, ScriptedModel([reply("Deleted r1.")]), ran)
    [stream] = await first.recover_interrupted_runs()
    await first.drain()
    assert stream.run_id == run_id and ran == []  # its stored outcome, not a second run
    assert await storage.load_snapshot(run_id) is None  # finished
    assert counted.calls["page_snapshots"] == 1  # one page: by key, no count
    assert counted.calls["list_snapshots"] == 0  # never an offset

    counted.reset()
    restarted = _agent(counted, ScriptedModel([]), ran)  # another start, on the same store
    assert await restarted.recover_interrupted_runs() == []
    assert counted.calls["page_snapshots"] == counted.calls["list_snapshots"] == 0


class RunEndsBetweenPages(CountingStorage):
    """A store on which, after each page of the scan, another run ends (its snapshot deleted,
    as a finishing run's is), while the scan is between two pages."""

    def __init__(self, inner: Storage, ending: list[str]) -> None:
        super().__init__(inner)
        self.ending = ending

    def _counted(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        counted = super()._counted(name, method)
        if name not in ("page_snapshots", "list_snapshots"):
            return counted

        async def then_a_run_ends(*args: Any, **kwargs: Any) -> Any:
            page = await counted(*args, **kwargs)
            if self.ending:
                await self.inner.delete_snapshot(self.ending.pop(0))
            return page

        return then_a_run_ends


async def test_a_run_ending_during_the_scan_does_not_hide_the_one_to_finish(
    storage: Storage,  # noqa: F811
) -> None:
    """A page of runs newer than the one to finish, which is first on the second page: under
    an offset, a run of the first page ending meanwhile moved it up onto the first page, which
    the scan had read already, so it was never finished."""
    run_id = await _completed_but_not_applied(storage)
    stuck = await storage.load_snapshot(run_id)
    assert stuck is not None
    newer = [f"newer-{n:03d}" for n in range(_SCAN_PAGE)]
    older = [f"older-{n:03d}" for n in range(5)]
    for n, other in enumerate(newer + older):  # waiting runs without a claim: nothing owed
        seconds = 1 + n if n < len(newer) else len(newer) - n - 1
        moved = stuck.suspended_at + timedelta(seconds=seconds)
        await storage.save_snapshot(dataclasses.replace(stuck, run_id=other, suspended_at=moved))
    ran: list[str] = []
    ending = RunEndsBetweenPages(storage, [newer[-1]])  # on the first page, read already

    agent = _agent(ending, ScriptedModel([reply("Deleted r1.")]), ran)
    [stream] = await agent.recover_interrupted_runs()
    await agent.drain()

    assert stream.run_id == run_id and ran == []
    assert await storage.load_snapshot(run_id) is None  # finished
    assert ending.calls["page_snapshots"] == 2 and ending.calls["list_snapshots"] == 0
    assert ending.made("list_claims_of_runs") == 2  # the claims of a page's runs: one read
    assert ending.calls["list_claims"] == 0
