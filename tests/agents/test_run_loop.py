"""stream()/generate(), chunks, RunResult, max_steps, tools as dict or list."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, Runner, ServedParts
from agents.errors import ScriptExhausted
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tools import Tool


async def test_full_stream_and_text_stream_each_see_the_whole_run(store: InMemoryStorage) -> None:
    agent = Agent(id="a", model=ScriptedModel([reply("hello brave world")]), storage=store)
    stream = await agent.stream("hi")
    result = await stream.result()  # consumers start late on purpose
    types = [c.type async for c in stream.full_stream]
    text = "".join([t async for t in stream.text_stream])
    assert types == ["start", "text-delta", "text-delta", "text-delta", "step-finish", "finish"]
    assert text == "hello brave world" == result.text
    assert result.finish_reason == "stop"


async def test_stream_consumers_can_read_concurrently_while_the_run_proceeds(
    store: InMemoryStorage,
) -> None:
    agent = Agent(id="a", model=ScriptedModel([reply("a b c")]), storage=store)
    stream = await agent.stream("hi")

    async def chunks() -> list[str]:
        return [c.type async for c in stream.full_stream]

    async def texts() -> str:
        return "".join([t async for t in stream.text_stream])

    types, text = await asyncio.gather(chunks(), texts())
    assert types[0] == "start" and types[-1] == "finish"
    assert text == "a b c"
    assert {c.run_id async for c in stream.full_stream} == {stream.run_id}


async def test_generate_returns_every_run_result_field(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    model = ScriptedModel([call("lookup", {"id": "7"}, id="c1"), reply("Found 7.")])
    agent = Agent(id="a", model=model, tools={"lookup": make_tool("lookup")}, storage=store)
    result = await agent.generate("find 7")
    assert result.finish_reason == "stop"
    assert result.text == "Found 7."
    assert [(c.tool_call_id, c.tool_name, c.args) for c in result.tool_calls] == [
        ("c1", "lookup", {"id": "7"})
    ]
    assert result.tool_results[0].result == {"ok": True, "id": "7"}
    assert len(result.steps) == 2
    assert result.steps[0].tool_calls[0].tool_name == "lookup"
    assert result.pending == [] and result.suspend_payload is None
    assert result.usage.total_tokens >= 0
    assert result["run_id"] == result.run_id


async def test_max_steps_stops_the_loop_with_finish_reason_length(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    model = ScriptedModel([call("lookup", {"id": str(i)}) for i in range(5)])
    agent = Agent(id="a", model=model, tools={"lookup": make_tool("lookup")}, storage=store)
    result = await agent.generate("loop", max_steps=2)
    assert result.finish_reason == "length"
    assert len(model.requests) == 2


async def test_tools_given_as_a_list_are_named_by_their_id(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    model = ScriptedModel([reply("ok")])
    agent = Agent(id="a", model=model, tools=[make_tool("delete-record")], storage=store)
    await agent.generate("x")
    assert [t.name for t in model.requests[0].tools] == ["delete-record"]
    assert model.requests[0].tools[0].parameters["properties"]["id"]["type"] == "string"


async def test_instructions_are_the_system_message(store: InMemoryStorage) -> None:
    model = ScriptedModel([reply("ok")])
    await Agent(id="a", instructions="Be brief.", model=model, storage=store).generate("x")
    assert [m.role for m in model.requests[0].messages] == ["system", "user"]
    assert model.requests[0].messages[0].content == "Be brief."


async def test_a_model_failure_is_an_error_chunk_and_generate_raises_it(
    store: InMemoryStorage,
) -> None:
    agent = Agent(id="a", model=ScriptedModel([]), storage=store)
    stream = await agent.stream("x")
    result = await stream.result()
    chunks = [c async for c in stream.full_stream]
    assert result.finish_reason == "error"
    assert isinstance(result.error, ScriptExhausted)
    assert [c.type for c in chunks][-2:] == ["error", "finish"]
    with pytest.raises(ScriptExhausted):
        await agent.generate("again")


async def test_an_unknown_tool_is_reported_to_the_model_and_the_loop_goes_on(
    store: InMemoryStorage,
) -> None:
    model = ScriptedModel([call("nope", {}), reply("sorry")])
    result = await Agent(id="a", model=model, storage=store).generate("x")
    assert result.text == "sorry"
    assert "unknown tool 'nope'" in (model.requests[1].messages[-1].content or "")


async def test_a_tool_that_raises_becomes_an_error_result(store: InMemoryStorage) -> None:
    from pydantic import BaseModel

    from tools import create_tool

    class In(BaseModel):
        pass

    def boom(input: Any, ctx: Any) -> None:
        raise ValueError("disk full")

    tool = create_tool(id="boom", description="", input_schema=In, execute=boom)
    model = ScriptedModel([call("boom", {}), reply("failed")])
    result = await Agent(id="a", model=model, tools=[tool], storage=store).generate("x")
    assert result.tool_results[0].result == {"error": "tool 'boom' failed: ValueError: disk full"}


async def test_an_agent_without_storage_warns_once_when_a_run_uses_its_in_memory_store(
    caplog: pytest.LogCaptureFixture, make_tool: Callable[..., Tool]
) -> None:
    script = [call("delete-record", {"id": "1"}), call("delete-record", {"id": "2"})]
    agent = Agent(
        id="volatile", model=ScriptedModel(script), tools=[make_tool(require_approval=True)]
    )
    assert "do not survive a restart" not in caplog.text  # building one is not using it
    assert (await agent.generate("delete 1")).finish_reason == "suspended"
    assert (await agent.generate("delete 2")).finish_reason == "suspended"
    assert caplog.text.count("do not survive a restart") == 1


async def test_an_agent_built_without_storage_and_served_with_some_never_warns(
    caplog: pytest.LogCaptureFixture, make_tool: Callable[..., Tool]
) -> None:
    store = InMemoryStorage()
    script = ScriptedModel([call("delete-record", {"id": "1"})])
    agent = Agent(id="ops", model=script, tools=[make_tool(require_approval=True)])
    served = agent.served(ServedParts(storage=store))
    assert (await served.generate("delete 1")).finish_reason == "suspended"
    assert served.storage is store
    assert "do not survive a restart" not in caplog.text


async def test_an_agent_served_without_storage_warns_when_a_run_uses_the_store(
    caplog: pytest.LogCaptureFixture, make_tool: Callable[..., Tool]
) -> None:
    script = ScriptedModel([call("delete-record", {"id": "1"})])
    agent = Agent(id="ops", model=script, tools=[make_tool(require_approval=True)])
    served = agent.served(ServedParts())
    assert "do not survive a restart" not in caplog.text
    assert (await served.generate("delete 1")).finish_reason == "suspended"
    assert "agent 'ops' has no storage" in caplog.text


async def test_changing_an_attribute_rebuilds_the_agent_on_the_same_store(
    make_tool: Callable[..., Tool],
) -> None:
    script = ScriptedModel([call("delete-record", {"id": "1"}), reply("done")])
    agent = Agent(id="ops", model=script, tools=[make_tool(require_approval=True)])
    first = await agent.generate("delete 1")
    agent.description = "Deletes records"
    agent.claim_lease_seconds = 5
    assert (agent.description, agent.claim_lease_seconds) == ("Deletes records", 5)
    done = await agent.approve_tool_call_generate(run_id=first.run_id)  # still found
    assert done.text == "done"


async def test_a_supervisor_leaves_the_sub_agent_it_was_given_unchanged() -> None:
    store = InMemoryStorage()
    runner = Runner()
    billing = Agent(id="billing", model=ScriptedModel([]))
    ops = Agent(
        id="ops", model=ScriptedModel([]), agents={"billing": billing}, storage=store, runner=runner
    )
    inner = ops.agents["billing"]
    assert inner.storage is store and inner.runner is runner
    assert billing.runner is not runner
    hosts = Runner()
    served = ops.served(ServedParts(runner=hosts))
    assert served.runner is hosts and served.agents["billing"].runner is hosts
    assert ops.runner is runner
