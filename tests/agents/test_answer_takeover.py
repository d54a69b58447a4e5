"""The model's answer after a decided call is leased like the call (SPEC 3.4): when the process
that stored the call's outcome dies while the model answers, another instance's recovery takes
the answer over and produces it once; the first process, should it wake up, drops its own.

Found by the chaos test: an instance killed after the outcome was stored and before its answer
was posted left the thread with "✅ Approved" and no outcome, for good (the run had finished
as far as storage knew)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agents import Agent, LeaseLost
from agents.memory import Memory
from agents.models import ModelRequest, TextDelta, ToolCallRequest
from agents.models._base import ModelEvent
from storage import Storage, utcnow
from tests.backends import storage, storage_url  # noqa: F401
from tools import ToolContext, create_tool


class Target(BaseModel):
    id: str


class AnswerGate:
    """A model that asks for the tool, then answers only once ``release`` is set."""

    model_id = "gated"

    def __init__(self, name: str) -> None:
        self.name = name
        self.answering = asyncio.Event()
        self.release = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.messages[-1].role == "user":
            yield ToolCallRequest(id="c1", name="delete-record", args={"id": "42"})
            return
        self.answering.set()
        await self.release.wait()
        yield TextDelta(text=f"Deleted 42 ({self.name}).")


def _agent(store: Storage, model: AnswerGate, runs: list[str]) -> Agent:
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


async def test_an_answer_whose_process_died_is_produced_once_by_recovery(
    storage: Storage,  # noqa: F811
) -> None:
    runs: list[str] = []
    gate_a, gate_b = AnswerGate("A"), AnswerGate("B")
    gate_b.release.set()
    a, b = _agent(storage, gate_a, runs), _agent(storage, gate_b, runs)
    first = await a.generate("delete 42", thread_id="t1")
    stream = await a.approve_tool_call(run_id=first.run_id, decided_by="U2")
    await gate_a.answering.wait()  # the outcome is stored; A "dies" while the model answers

    later = utcnow() + timedelta(hours=1)  # A's lease lapsed long ago
    taken = await storage.take_over_expired_claims(b._runtime.owner, now=later, lease_until=later)
    [claim] = [c for c in taken if c.run_id == first.run_id]
    assert claim.decision == "continued" and claim.epoch == 1
    from agents.deciding._recovery import recover_claim

    recovered = await recover_claim(b._runtime, claim)  # what B's recovery pass does with it
    assert recovered is not None
    await recovered.drive()
    result = await recovered.stream.result()
    assert result.finish_reason == "stop" and result.text == "Deleted 42 (B)."
    chunks = [c.type async for c in recovered.stream.full_stream]
    assert chunks[:2] == ["start", "tool-call-resumed"]  # names the call it answers

    gate_a.release.set()  # A wakes up: its answer is refused, unannounced
    late = await stream.result()
    assert late.finish_reason == "abandoned" and isinstance(late.error, LeaseLost)

    assert runs == ["42"]  # the tool ran once
    answers = [m.content for m in await storage.list_messages("t1") if m.role == "assistant"]
    assert answers[-1] == {"role": "assistant", "content": "Deleted 42 (B)."}
    assert "Deleted 42 (A)." not in str(answers)
    snapshot, claims, _ = await storage.load_run(first.run_id)
    assert snapshot is None  # the run is over
    assert {c.decision: c.status for c in claims} == {
        "approved": "completed",
        "continued": "completed",
    }


async def test_without_a_thread_nothing_is_leased_after_the_outcome(
    storage: Storage,  # noqa: F811
) -> None:
    """Only a thread is owed the answer (nobody but the caller could be told it otherwise): a
    run without memory costs no claim and no transaction more than before."""
    runs: list[str] = []
    gate = AnswerGate("A")
    gate.release.set()
    agent = _agent(storage, gate, runs)
    first = await agent.generate("delete 42")
    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
    assert done.text == "Deleted 42 (A)."
    _, claims, _ = await storage.load_run(first.run_id)
    assert [c.decision for c in claims] == ["approved"]
