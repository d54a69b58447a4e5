"""SPEC 3.3: approve, decline, edited args, fingerprints, single-use decisions, errors."""

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from agents import (
    Agent,
    AlreadyDecided,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
    fingerprint,
)
from agents.errors import InvalidToolArgs
from agents.models import ScriptedModel, call, calls, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions, RefundInput
from tools import Tool


def _gated_agent(
    store: InMemoryStorage, make_tool: Callable[..., Tool], *script: Any, model: Any = None
) -> Agent:
    return Agent(
        id="ops",
        model=model or ScriptedModel([call("delete-record", {"id": "abc-123"}, id="c1"), *script]),
        tools=[
            make_tool(require_approval=True),
            make_tool("refund", input_schema=RefundInput, require_approval=True),
        ],
        storage=store,
    )


async def test_approve_without_id_runs_the_most_recent_pending_call(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("Deleted."))
    first = await agent.generate("delete abc-123")
    stream = await agent.approve_tool_call(run_id=first.run_id, decided_by="U1")
    types = [c.type async for c in stream.full_stream]
    result = await stream.result()
    assert types[:3] == ["start", "tool-call-resumed", "tool-result"]
    assert result.text == "Deleted." and result.finish_reason == "stop"
    assert executions.of("delete-record") == [{"id": "abc-123"}]
    assert await store.load_snapshot(first.run_id) is None


async def test_an_explicit_id_that_is_not_pending_raises_tool_call_not_suspended(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("x"))
    first = await agent.generate("delete")
    with pytest.raises(ToolCallNotSuspended) as info:
        await agent.approve_tool_call(run_id=first.run_id, tool_call_id="nope")
    assert info.value.code == "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"
    assert executions.calls == []


async def test_an_unknown_run_raises_snapshot_not_found_saying_how_to_persist(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    agent = _gated_agent(store, make_tool)
    with pytest.raises(SnapshotNotFound) as info:
        await agent.approve_tool_call(run_id="never-seen")
    assert info.value.code == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
    assert "STORAGE_URL" in str(info.value)


async def test_approve_with_edited_args_runs_them_and_records_the_edit(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    await agent.approve_tool_call_generate(
        run_id=first.run_id, args={"id": "abc-999"}, decided_by="U1"
    )
    assert executions.of("delete-record") == [{"id": "abc-999"}]
    decided = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "decided"]
    assert decided[0].data["edited"] is True
    assert decided[0].data["original_args"] == {"id": "abc-123"}
    assert decided[0].data["args"] == {"id": "abc-999"}


async def test_invalid_edited_args_raise_before_the_claim_and_the_call_stays_pending(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    with pytest.raises(InvalidToolArgs):
        await agent.approve_tool_call(run_id=first.run_id, args={"id": 42, "extra": []})
    assert executions.calls == []
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.finish_reason == "stop"


@pytest.mark.parametrize("reason", [None, "wrong record"])
async def test_decline_never_runs_the_tool_and_the_model_is_told_and_answers(
    store: InMemoryStorage,
    make_tool: Callable[..., Tool],
    executions: Executions,
    reason: str | None,
) -> None:
    model = ScriptedModel(
        [call("delete-record", {"id": "abc-123"}, id="c1"), reply("I did not delete it.")]
    )
    agent = _gated_agent(store, make_tool, model=model)
    first = await agent.generate("delete")
    stream = await agent.decline_tool_call(run_id=first.run_id, reason=reason)
    chunks = [c async for c in stream.full_stream]
    result = await stream.result()
    assert executions.calls == []
    denied = next(c for c in chunks if c.type == "tool-output-denied")
    assert denied.payload.reason == reason and denied.payload["tool_call_id"] == "c1"
    told = json.loads(model.requests[-1].messages[-1].content or "")
    assert told["status"] == "declined" and "NOT executed" in told["message"]
    assert told.get("reason") == reason
    assert result.text == "I did not delete it."


async def test_fingerprint_must_match_the_pending_call(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    assert first.pending[0].fingerprint == fingerprint("delete-record", {"id": "abc-123"})
    with pytest.raises(FingerprintMismatch):
        await agent.approve_tool_call(
            run_id=first.run_id, fingerprint=fingerprint("delete-record", {"id": "other"})
        )
    assert executions.calls == []
    await agent.approve_tool_call_generate(
        run_id=first.run_id, fingerprint=fingerprint("delete-record", {"id": "abc-123"})
    )
    assert len(executions.calls) == 1


async def test_a_second_decision_raises_already_decided_even_after_the_run_finished(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = _gated_agent(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    await agent.approve_tool_call_generate(run_id=first.run_id, tool_call_id="c1", decided_by="U1")
    for attempt in (
        agent.approve_tool_call(run_id=first.run_id, tool_call_id="c1"),
        agent.decline_tool_call(run_id=first.run_id, tool_call_id="c1"),
        agent.approve_tool_call(run_id=first.run_id),
    ):
        with pytest.raises(AlreadyDecided) as info:
            await attempt
        assert info.value.decided_by == "U1" and info.value.decision == "approved"
        assert info.value.code == "APPROVAL_ALREADY_DECIDED"
    assert len(executions.calls) == 1


@pytest.mark.parametrize("racers", [2, 50])
async def test_racing_approvals_run_the_tool_exactly_once(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions, racers: int
) -> None:
    agent = _gated_agent(store, make_tool, reply("ok"))
    first = await agent.generate("delete")
    outcomes = await asyncio.gather(
        *(agent.approve_tool_call(run_id=first.run_id, decided_by=f"U{i}") for i in range(racers)),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    assert len(winners) == 1 and len(losers) == racers - 1
    await winners[0].result()  # type: ignore[union-attr]
    await agent.drain()
    assert len(executions.calls) == 1


async def test_parallel_calls_each_pend_separately_and_the_model_waits_for_all(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel(
        [
            calls(
                call("lookup", {"id": "1"}, id="free"),
                call("delete-record", {"id": "a"}, id="g1"),
                call("delete-record", {"id": "b"}, id="g2"),
            ),
            reply("all done"),
        ]
    )
    agent = Agent(
        id="ops",
        model=model,
        tools=[make_tool("lookup"), make_tool(require_approval=True)],
        storage=store,
    )
    stream = await agent.stream("go")
    chunks = [c async for c in stream.full_stream]
    first = await stream.result()
    approvals = [c.payload["tool_call_id"] for c in chunks if c.type == "tool-call-approval"]
    assert approvals == ["g1", "g2"]
    assert executions.of("lookup") == [{"id": "1"}]
    assert {p.tool_call_id for p in first.pending} == {"g1", "g2"}

    later = await agent.decline_tool_call_generate(run_id=first.run_id, tool_call_id="g2")
    assert later.finish_reason == "suspended"
    assert [p.tool_call_id for p in later.pending] == ["g1"]
    assert len(model.requests) == 1  # not called again while g1 is unresolved

    done = await agent.approve_tool_call_generate(run_id=first.run_id, tool_call_id="g1")
    assert done.text == "all done"
    assert executions.of("delete-record") == [{"id": "a"}]
    tool_messages = [m for m in model.requests[1].messages if m.role == "tool"]
    assert {m.tool_call_id for m in tool_messages} == {"free", "g1", "g2"}


async def test_decisions_on_different_parallel_calls_can_race(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel(
        [
            calls(*(call("delete-record", {"id": str(i)}, id=f"g{i}") for i in range(5))),
            reply("done"),
        ]
    )
    agent = Agent(id="ops", model=model, tools=[make_tool(require_approval=True)], storage=store)
    first = await agent.generate("go")
    streams = await asyncio.gather(
        *(agent.approve_tool_call(run_id=first.run_id, tool_call_id=f"g{i}") for i in range(5))
    )
    results = [await s.result() for s in streams]
    assert sorted(a["id"] for a in executions.of("delete-record")) == ["0", "1", "2", "3", "4"]
    assert [r.text for r in results].count("done") == 1
    assert len(model.requests) == 2


async def test_edited_arguments_keep_their_json_types(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("refund", {"order": 7, "amount": 250}, id="c1"), reply("ok")]),
        tools=[make_tool("refund", input_schema=RefundInput, require_approval=True)],
        storage=store,
    )
    first = await agent.generate("refund")
    await agent.approve_tool_call_generate(
        run_id=first.run_id, args={"order": 8, "amount": 250}, decided_by="U1"
    )
    decided = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "decided"]
    assert json.dumps(decided[0].data["args"]) == '{"order": 8, "amount": 250}'
