"""SPEC 3.5: memory threads, auto-resume from a plain reply, approvals never decided by text."""

from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, AmbiguousToolCall
from agents.memory import Memory
from agents.models import ScriptedModel, call, calls, obj, reply
from agents.running._auto_resume import response_schema
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tests.agents.test_suspend_resume import Priority, Ticketing
from tools import Tool

THREAD = {"thread_id": "t-1", "resource_id": "u-1"}


def _agent(store: InMemoryStorage, model: ScriptedModel, tools: list[Tool], **kw: Any) -> Agent:
    return Agent(
        id="ops",
        model=model,
        tools=tools,
        memory=Memory(storage=store, last_messages=40),
        default_options={"auto_resume_suspended_tools": True},
        **kw,
    )


async def test_the_user_message_and_tool_call_are_in_memory_before_the_suspension(
    store: InMemoryStorage,
) -> None:
    model = ScriptedModel([call("open-ticket", {"title": "printer"}, id="t1")])
    agent = _agent(store, model, [Ticketing().tool()])
    result = await agent.generate("open a ticket about the printer", **THREAD)
    assert result.finish_reason == "suspended"
    messages = await agent.memory.messages("t-1")  # type: ignore[union-attr]
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].tool_calls[0].name == "open-ticket"
    thread = await store.get_thread("t-1")
    assert thread is not None and thread.resource_id == "u-1"


async def test_the_next_run_in_a_thread_sees_its_history_within_last_messages(
    store: InMemoryStorage,
) -> None:
    model = ScriptedModel([reply("one"), reply("two"), reply("three")])
    agent = Agent(id="a", model=model, memory=Memory(storage=store, last_messages=3))
    for text in ("first", "second", "third"):
        await agent.generate(text, **THREAD)
    seen = [m.content for m in model.requests[2].messages]
    assert seen == ["one", "second", "two", "third"]  # 3 earlier messages + this run


async def test_a_reply_with_valid_data_resumes_the_suspended_call(store: InMemoryStorage) -> None:
    ticketing = Ticketing()
    model = ScriptedModel(
        [
            call("open-ticket", {"title": "printer"}, id="t1"),
            obj({"answered": True, "resume_data": {"priority": "high"}}),
            reply("Opened with high priority."),
        ]
    )
    agent = _agent(store, model, [ticketing.tool()])
    await agent.generate("open a ticket", **THREAD)
    stream = await agent.stream("make it high", **THREAD)
    chunks = [c async for c in stream.full_stream]
    result = await stream.result()
    assert "tool-call-resumed" in [c.type for c in chunks]
    assert result.text == "Opened with high priority."
    assert ticketing.opened == [{"title": "printer", "priority": "high"}]
    extraction = model.requests[1]
    assert extraction.response_schema == response_schema(Priority.model_json_schema())
    assert extraction.tools == []
    audit = [e for e in await store.query_audit(thread_id="t-1") if e.kind == "decided"]
    assert audit[0].source == "thread-reply"


@pytest.mark.parametrize(
    "answer",
    [
        {"answered": False, "resume_data": None},
        {"answered": True, "resume_data": {"priority": "urgent"}},  # invalid against the schema
        "not even an object",
    ],
)
async def test_a_reply_without_valid_data_is_a_normal_turn_and_the_call_stays_pending(
    store: InMemoryStorage, answer: Any
) -> None:
    ticketing = Ticketing()
    model = ScriptedModel(
        [call("open-ticket", {"title": "printer"}, id="t1"), obj(answer), reply("Sure, what else?")]
    )
    agent = _agent(store, model, [ticketing.tool()])
    await agent.generate("open a ticket", **THREAD)
    result = await agent.generate("what's the weather?", **THREAD)
    assert result.text == "Sure, what else?"
    assert ticketing.opened == []
    listed = await agent.list_suspended_runs(thread_id="t-1")
    assert [c.tool_call_id for run in listed.runs for c in run.tool_calls] == ["t1"]


async def test_with_several_suspended_calls_the_extraction_picks_the_one_it_fills(
    store: InMemoryStorage,
) -> None:
    ticketing = Ticketing()
    model = ScriptedModel(
        [
            calls(
                call("open-ticket", {"title": "printer"}, id="t1"),
                call("open-ticket", {"title": "vpn"}, id="t2"),
            ),
            obj({"answered": False, "resume_data": None}),  # most recent first: t2
            obj({"answered": True, "resume_data": {"priority": "low"}}),  # then t1
            reply("ok"),
        ]
    )
    agent = _agent(store, model, [ticketing.tool()])
    await agent.generate("open two tickets", **THREAD)
    result = await agent.generate("the printer one is low", **THREAD)
    assert result.finish_reason == "suspended"  # t2 still waits
    assert ticketing.opened == [{"title": "printer", "priority": "low"}]
    assert [p.tool_call_id for p in result.pending] == ["t2"]


async def test_text_never_decides_an_approval_even_when_the_model_tries(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel(
        [
            call("delete-record", {"id": "42"}, id="c1"),
            # The user says "yes, approved"; the model tries to approve by calling the tool again.
            call("delete-record", {"id": "42"}, id="c2"),
        ]
    )
    agent = _agent(store, model, [make_tool(require_approval=True)])
    await agent.generate("delete record 42", **THREAD)
    result = await agent.generate("yes, approved", **THREAD)
    assert executions.calls == []
    assert all(r.response_schema is None for r in model.requests)  # no extraction for approvals
    assert result.finish_reason == "suspended"
    listed = await agent.list_suspended_runs(thread_id="t-1")
    assert sorted(c.tool_call_id for run in listed.runs for c in run.tool_calls) == ["c1", "c2"]


async def test_send_tool_approval_finds_the_run_through_storage(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel([call("delete-record", {"id": "42"}, id="c1"), reply("deleted")])
    agent = _agent(store, model, [make_tool(require_approval=True)])
    await agent.generate("delete 42", **THREAD)
    stream = await agent.send_tool_approval(thread_id="t-1", resource_id="u-1", approved=True)
    assert (await stream.result()).text == "deleted"
    assert executions.of("delete-record") == [{"id": "42"}]


async def test_send_tool_approval_with_several_pending_asks_for_an_id(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    model = ScriptedModel(
        [
            calls(
                call("delete-record", {"id": "1"}, id="c1"),
                call("delete-record", {"id": "2"}, id="c2"),
            ),
            reply("ok"),
        ]
    )
    agent = _agent(store, model, [make_tool(require_approval=True)])
    await agent.generate("delete both", **THREAD)
    with pytest.raises(AmbiguousToolCall, match="tool_call_id"):
        await agent.send_tool_approval(thread_id="t-1", resource_id="u-1", approved=False)
    stream = await agent.send_tool_approval(
        thread_id="t-1", resource_id="u-1", approved=False, tool_call_id="c2", reason="no"
    )
    assert (await stream.result()).finish_reason == "suspended"
    assert executions.calls == []


async def test_list_suspended_runs_pages_and_counts(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    model = ScriptedModel([call("delete-record", {"id": str(i)}) for i in range(5)])
    agent = _agent(store, model, [make_tool(require_approval=True)])
    for i in range(5):
        await agent.generate(f"delete {i}", thread_id=f"t{i % 2}", resource_id="u")
    everything = await agent.list_suspended_runs()
    assert everything.total == 5 and len(everything.runs) == 5
    page = await agent.list_suspended_runs(resource_id="u", page=1, per_page=2)
    assert page.total == 5 and len(page.runs) == 2
    assert page.runs[0].run_id == everything.runs[2].run_id
    evens = await agent.list_suspended_runs(thread_id="t0")
    assert evens.total == 3
    run = evens.runs[0]
    assert run.agent_id == "ops" and run.thread_id == "t0" and run.resource_id == "u"
    assert run.tool_calls[0].tool_name == "delete-record" and run.tool_calls[0].agent_path == [
        "ops"
    ]
