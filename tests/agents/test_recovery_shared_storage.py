"""Two agents on one storage (the bot's agent and the gateway's, SPEC 17): each one's crash
recovery finishes its own lapsed claims, and gives another agent's back for that agent to
finish: never dropped (an answer owed to a thread lost), never held by an agent that cannot
finish it (a tool never retried)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agents import Agent, AgentStream
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import ClaimRecord, Storage, utcnow
from tests.agents.test_answer_takeover import AnswerGate
from tests.backends import storage, storage_url  # noqa: F401
from tools import ToolContext, create_tool


class Target(BaseModel):
    id: str


def _agent(
    agent_id: str,
    store: Storage,
    model: Any,
    runs: list[str],
    block: bool,
    started: asyncio.Event | None = None,
    release: asyncio.Event | None = None,
) -> Agent:
    release = release or asyncio.Event()

    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        runs.append(f"{agent_id}:{input.id}")
        if started is not None:
            started.set()
        if block and len(runs) == 1:
            await release.wait()  # the first run "dies" here (its claim is taken from it)
        return {"deleted": input.id}

    return Agent(
        id=agent_id,
        model=model,
        tools=[
            create_tool(
                id="delete-record",
                description="Delete a record",
                input_schema=Target,
                execute=delete,
                require_approval=True,
                idempotent=True,
            )
        ],
        storage=store,
        memory=Memory(storage=store),
    )


async def _dies(store: Storage, run_id: str) -> ClaimRecord:
    """The claim's owner died long ago: it is held by no one alive, its lease lapsed."""
    later = utcnow() + timedelta(hours=1)
    taken = await store.take_over_expired_claims("dead", now=later, lease_until=later)
    [claim] = [c for c in taken if c.run_id == run_id]
    lapsed = utcnow() - timedelta(hours=1)
    assert await store.renew_lease(run_id, claim.key, "dead", lapsed, epoch=claim.epoch)
    return claim


async def _finished(streams: list[AgentStream]) -> list[str]:
    return [(await stream.result()).finish_reason for stream in streams]


async def test_another_agents_lapsed_tool_claim_is_left_for_that_agent_to_retry(
    storage: Storage,  # noqa: F811
) -> None:
    runs: list[str] = []
    script = [call("delete-record", {"id": "7"}), reply("Deleted 7.")]
    started, release = asyncio.Event(), asyncio.Event()
    dying = _agent(
        "gateway",
        storage,
        ScriptedModel(script),
        runs,
        block=True,
        started=started,
        release=release,
    )
    first = await dying.generate("delete 7")
    await dying.approve_tool_call(run_id=first.run_id, decided_by="U2")
    await started.wait()
    await _dies(storage, first.run_id)

    ops = _agent("ops", storage, ScriptedModel([]), runs, block=False)
    gateway = _agent("gateway", storage, ScriptedModel([reply("Deleted 7.")]), runs, block=False)
    assert await ops.recover_interrupted_runs() == []  # not its run: given back
    recovered = await gateway.recover_interrupted_runs()
    assert await _finished(recovered) == ["stop"]
    assert runs == ["gateway:7", "gateway:7"]  # retried (idempotent) by its own agent
    _, claims, _ = await storage.load_run(first.run_id)
    assert [(c.decision, c.status) for c in claims] == [("approved", "completed")]
    release.set()  # the "dead" process wakes up: it finds its claim taken over
    await dying.drain()


async def test_another_agents_lapsed_answer_is_not_dropped_but_answered_by_its_agent(
    storage: Storage,  # noqa: F811
) -> None:
    runs: list[str] = []
    gate_a, gate_b = AnswerGate("A"), AnswerGate("B")
    gate_b.release.set()
    dying = _agent("ops", storage, gate_a, runs, block=False)
    first = await dying.generate("delete 42", thread_id="t1")
    await dying.approve_tool_call(run_id=first.run_id, decided_by="U2")
    await gate_a.answering.wait()  # the outcome is stored; the process dies while answering
    claim = await _dies(storage, first.run_id)
    assert claim.decision == "continued"

    gateway = _agent("gateway", storage, ScriptedModel([]), runs, block=False)
    ops = _agent("ops", storage, gate_b, runs, block=False)
    assert await gateway.recover_interrupted_runs() == []  # not its run: given back, not dropped
    recovered = await ops.recover_interrupted_runs()
    assert await _finished(recovered) == ["stop"]
    answers = [m.content for m in await storage.list_messages("t1") if m.role == "assistant"]
    assert "Deleted 42 (B)." in str(answers[-1])
    gate_a.release.set()
    await dying.drain()
