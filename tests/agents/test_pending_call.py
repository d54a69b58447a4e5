"""SPEC 3.3: ``agent.pending_call`` hands out one pending call in one read, with the
``definition_digest`` of its tool; the approval chunk carries the same fields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from agents import Agent, CallRules, PendingToolCall, ServedParts, ToolCallApprovalChunk
from agents.models import ScriptedModel, call, calls, reply
from storage import InMemoryStorage, SnapshotRecord, Storage
from tests.agents.test_supervisors import Ledger, _billing
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tests.counting import CountingStorage
from tools import Tool


def _agent(store: Storage, make_tool: Callable[..., Tool], *script: Any) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel(list(script) or [call("delete-record", {"id": "abc"}, id="c1")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )


async def _announced(agent: Agent, message: str = "delete abc") -> ToolCallApprovalChunk:
    stream = await agent.stream(message, requested_by="U1")
    chunks = [c async for c in stream.full_stream]
    return next(c for c in chunks if isinstance(c, ToolCallApprovalChunk))


async def test_pending_call_is_the_listed_call_with_its_tools_definition_digest(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool)
    chunk = await _announced(agent)
    found = await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1")
    assert isinstance(found, PendingToolCall)
    [listed] = (await agent.list_suspended_runs()).runs[0].tool_calls
    assert found == listed
    assert found.definition_digest == agent.tools["delete-record"].definition_digest
    assert (found.requested_by, found.edited_from, found.grantable) == ("U1", None, False)


async def test_the_approval_chunk_carries_the_pending_call_itself(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool)
    chunk = await _announced(agent)
    found = await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1")
    assert chunk.pending_call() == found
    assert chunk.payload["definition_digest"] == agent.tools["delete-record"].definition_digest


async def test_pending_call_reads_storage_once(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    counted = CountingStorage(storage)
    agent = _agent(cast(Storage, counted), make_tool)
    chunk = await _announced(agent)
    counted.reset()
    assert await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1") is not None
    assert counted.calls == {"load_run_and_escalations": 1}


async def test_a_decided_or_unknown_call_is_none(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool, call("delete-record", {"id": "abc"}, id="c1"), reply("ok"))
    chunk = await _announced(agent)
    assert await agent.pending_call(run_id=chunk.run_id, tool_call_id="other") is None
    assert await agent.pending_call(run_id="never-seen", tool_call_id="c1") is None
    stream = await agent.approve_tool_call(run_id=chunk.run_id, tool_call_id="c1")
    assert await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1") is None
    await stream.result()
    assert await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1") is None


async def test_a_quorum_call_lists_who_approved_so_far(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool)
    agent = agent.served(ServedParts(call_rules=lambda *_: _two()))
    chunk = await _announced(agent)
    assert chunk.approvals_required == 2 and chunk.approved_by == []
    await (await agent.approve_tool_call(run_id=chunk.run_id, decided_by="U2")).result()
    found = await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1")
    assert found is not None and found.approved_by == ["U2"] and found.approvals_required == 2


def _two() -> CallRules:
    return CallRules(approvals=2)


async def test_a_sub_agents_call_is_found_by_the_outer_handle() -> None:
    ledger = Ledger()
    billing = _billing(ledger, call("refund", {"order": 7, "amount": 500}, id="inner"))
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 7"}, id="outer")]),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    chunk = await _announced(ops, "refund order 7")
    assert (chunk.tool_call_id, chunk.tool_name) == ("outer", "refund")
    found = await ops.pending_call(run_id=chunk.run_id, tool_call_id="outer")
    assert found is not None and found.tool_name == "refund"
    assert found.agent_path == ["ops", "billing"]
    assert found.definition_digest == billing.tools["refund"].definition_digest
    assert chunk.pending_call() == found


async def test_each_parallel_call_of_a_sub_agent_is_found_by_its_own_outer_handle() -> None:
    both = calls(
        call("refund", {"order": 1, "amount": 500}, id="a"),
        call("refund", {"order": 2, "amount": 700}, id="b"),
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 1 and 2"}, id="outer")]),
        agents={"billing": _billing(Ledger(), both)},
        storage=InMemoryStorage(),
    )
    result = await ops.generate("refund orders 1 and 2")
    assert len({p.tool_call_id for p in result.pending}) == 2
    for listed in result.pending:
        found = await ops.pending_call(run_id=result.run_id, tool_call_id=listed.tool_call_id)
        assert found == listed


async def test_a_snapshot_stored_before_digests_reads_as_no_digest(
    make_tool: Callable[..., Tool],
) -> None:
    store = InMemoryStorage()
    agent = _agent(store, make_tool)
    chunk = await _announced(agent)
    record = await store.load_snapshot(chunk.run_id)
    assert record is not None
    old = dict(record.data)
    old["pending"] = [
        {k: v for k, v in p.items() if k != "definition_digest"} for p in record.data["pending"]
    ]
    assert all("definition_digest" in p for p in record.data["pending"])
    await store.save_snapshot(_with(record, old))
    found = await agent.pending_call(run_id=chunk.run_id, tool_call_id="c1")
    assert found is not None and found.definition_digest is None
    assert found.fingerprint == chunk.fingerprint


def _with(record: SnapshotRecord, data: dict[str, Any]) -> SnapshotRecord:
    return replace(record, data=data, version=record.version + 1)
