"""A takeover is final (SPEC 3.4): an owner whose claim another instance took over drops the
call's outcome and its run without a word; recovery leaves an owner that is only late (the
grace of one more lease) alone."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, AgentStream, LeaseLost
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import ClaimRecord, Storage, utcnow
from tests.backends import storage, storage_url  # noqa: F401
from tools import ToolContext, create_tool


class Target(BaseModel):
    id: str


class Blocking:
    """A tool that blocks until released, then says which run of it this was."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.runs = 0

    async def execute(self, input: Target, ctx: ToolContext) -> dict[str, Any]:
        self.runs += 1
        self.started.set()
        await self.release.wait()
        return {"deleted": input.id, "run": self.runs}


def _agent(store: Storage, tool: Blocking, model: ScriptedModel, lease: float = 30) -> Agent:
    return Agent(
        id="ops",
        model=model,
        tools=[
            create_tool(
                id="delete-record",
                description="Delete a record",
                input_schema=Target,
                execute=tool.execute,
                require_approval=True,
                idempotent=True,
            )
        ],
        storage=store,
        memory=Memory(storage=store),
        claim_lease_seconds=lease,
    )


async def _take_over(store: Storage, run_id: str, owner: str = "B") -> ClaimRecord:
    """What another instance's recovery does once the lease lapsed: the claim, at epoch 1."""
    later = utcnow() + timedelta(hours=1)
    taken = await store.take_over_expired_claims(owner, now=later, lease_until=later)
    [claim] = [c for c in taken if c.run_id == run_id]
    assert claim.epoch == 1
    return claim


async def _chunks(stream: AgentStream) -> list[str]:
    return [chunk.type async for chunk in stream.full_stream]


async def _assert_nothing_of_the_old_owner(store: Storage, run_id: str, version: int) -> None:
    snapshot, [claim], _ = await store.load_run(run_id)
    assert snapshot is not None and snapshot.version == version  # not written
    assert (claim.status, claim.outcome, claim.owner, claim.epoch) == ("claimed", None, "B", 1)
    kinds = [e.kind for e in await store.query_audit(run_id=run_id)]
    assert "executed" not in kinds
    assert [m.role for m in await store.list_messages("t1")] == ["user", "assistant"]


async def test_an_owner_taken_over_mid_tool_drops_the_outcome_and_says_nothing(
    storage: Storage,  # noqa: F811
) -> None:
    tool = Blocking()
    model = ScriptedModel([call("delete-record", {"id": "42"}, id="c1"), reply("told twice")])
    agent = _agent(storage, tool, model)
    first = await agent.generate("delete 42", thread_id="t1")
    version = (await storage.load_run(first.run_id))[0].version  # type: ignore[union-attr]
    stream = await agent.approve_tool_call(run_id=first.run_id)
    await tool.started.wait()

    await _take_over(storage, first.run_id)
    tool.release.set()
    result = await stream.result()

    assert await _chunks(stream) == ["start", "tool-call-resumed"]  # no result, text, finish
    assert result.finish_reason == "abandoned" and isinstance(result.error, LeaseLost)
    assert result.error.code == "CLAIM_LEASE_LOST" and result.tool_results == []
    assert len(model.requests) == 1  # the model was never told
    await _assert_nothing_of_the_old_owner(storage, first.run_id, version)


async def test_a_refused_renewal_abandons_the_run_when_the_tool_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from storage import InMemoryStorage

    store = InMemoryStorage()
    tool = Blocking()
    model = ScriptedModel([call("delete-record", {"id": "42"}, id="c1"), reply("told twice")])
    agent = _agent(store, tool, model, lease=1)
    first = await agent.generate("delete 42", thread_id="t1")
    version = (await store.load_run(first.run_id))[0].version  # type: ignore[union-attr]
    stream = await agent.approve_tool_call(run_id=first.run_id)
    await tool.started.wait()
    await _take_over(store, first.run_id)
    async with asyncio.timeout(30):
        while "was taken over by another instance" not in caplog.text:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # the next renewal (a third of the lease) is refused

    tool.release.set()
    result = await stream.result()

    assert result.finish_reason == "abandoned" and isinstance(result.error, LeaseLost)
    assert await _chunks(stream) == ["start", "tool-call-resumed"]
    assert len(model.requests) == 1
    await _assert_nothing_of_the_old_owner(store, first.run_id, version)


async def test_recovery_takes_over_only_a_lease_lapsed_by_more_than_one_more_lease(
    storage: Storage,  # noqa: F811
) -> None:
    lease = 60.0
    now = utcnow()

    def claim(key: str, lapsed: float) -> ClaimRecord:
        return ClaimRecord(
            run_id="run-1",
            key=key,
            tool_call_id=key.split("#")[0],
            decision="approved",
            decided_by="U1",
            decided_at=now - timedelta(seconds=10 * lease),
            owner="A",
            lease_until=now - timedelta(seconds=lapsed),
        )

    await storage.claim(claim("late#0", lapsed=0.5 * lease))  # its owner may be waiting
    await storage.claim(claim("gone#0", lapsed=1.5 * lease))  # past the grace
    agent = _agent(storage, Blocking(), ScriptedModel([]), lease=lease)

    assert await agent.recover_interrupted_runs() == []  # no snapshot: nothing to go on with

    epochs = {c.key: (c.owner, c.epoch) for c in await storage.list_claims("run-1")}
    assert epochs["late#0"] == ("A", 0)
    assert epochs["gone#0"][1] == 1 and epochs["gone#0"][0] != "A"
