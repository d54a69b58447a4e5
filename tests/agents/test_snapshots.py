"""SPEC 3.4 on every backend: stored before announced, compact, gone when the run finishes."""

import json
from collections.abc import Callable

from agents import Agent
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import Storage
from tools import Tool

from tests.agents.conftest import Executions
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)


async def test_a_consumer_deciding_the_instant_it_sees_the_chunk_never_gets_not_found(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("delete-record", {"id": "42"}), reply("Deleted.")]),
        tools=[make_tool(require_approval=True)],
        memory=Memory(storage=storage),
    )
    stream = await agent.stream("delete 42", thread_id="t", resource_id="u")
    continuation = None
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":
            continuation = await agent.approve_tool_call(
                run_id=chunk.run_id, tool_call_id=chunk.payload.tool_call_id
            )
    assert continuation is not None
    assert (await continuation.result()).text == "Deleted."
    assert executions.of("delete-record") == [{"id": "42"}]
    assert await storage.load_snapshot(stream.run_id) is None


async def test_a_pending_call_in_a_short_run_stores_well_under_4_kb(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = Agent(
        id="ops",
        instructions="You run operations for the team. " * 20,
        model=ScriptedModel([call("delete-record", {"id": "abc-123"})]),
        tools=[make_tool(require_approval=True)],
        memory=Memory(storage=storage),
    )
    result = await agent.generate("Delete record abc-123", thread_id="t", resource_id="u")
    record = await storage.load_snapshot(result.run_id)
    assert record is not None
    size = len(json.dumps(record.data, separators=(",", ":")))
    assert size < 2048, size
    assert "You run operations" not in json.dumps(record.data)  # instructions are not copied
