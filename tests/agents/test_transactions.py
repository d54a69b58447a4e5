"""SPEC 3.4: each state change of a run is ONE transaction, counted on SQLite."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agents import Agent
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from tests.agents.conftest import Executions
from tests.sqlite_trace import traced_sqlite
from tools import Tool


async def test_suspend_decide_and_complete_are_one_commit_each(
    tmp_path: Path, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    store, trace = traced_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'tx.db'}")
    await store.migrate()
    tool = make_tool(require_approval=True)
    try:
        first_agent = Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1")]),
            tools=[tool],
            storage=store,
        )
        with trace.counting() as suspend:
            first = await first_agent.generate("delete 1", requested_by="U1")
        assert first.finish_reason == "suspended"
        assert suspend.write_transactions == 1  # snapshot + requester + audit, together

        second = Agent(id="ops", model=ScriptedModel([reply("done")]), tools=[tool], storage=store)
        with trace.counting() as decide:
            stream = await second.approve_tool_call(run_id=first.run_id, decided_by="U2")
        assert decide.write_transactions == 1  # claim + audit
        with trace.counting() as complete:
            done = await stream.result()
        assert done.finish_reason == "stop" and executions.of("delete-record") == [{"id": "1"}]
        assert complete.write_transactions == 1  # outcome + snapshot deleted + audit
    finally:
        await store.close()


async def test_with_memory_the_thread_is_written_with_the_state_changes(
    tmp_path: Path, make_tool: Callable[..., Tool]
) -> None:
    store, trace = traced_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'tx.db'}")
    await store.migrate()
    tool = make_tool(require_approval=True)
    try:
        agent = Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1"), reply("done")]),
            tools=[tool],
            storage=store,
            memory=Memory(storage=store),
        )
        with trace.counting() as suspend:
            first = await agent.generate("delete 1", thread_id="t1")
        assert (
            suspend.write_transactions == 1
        )  # snapshot + audit + thread + user and assistant messages
        with trace.counting() as rest:
            await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
        assert rest.write_transactions == 3  # claim; outcome + tool message; the final answer
        history = await agent.memory.messages("t1") if agent.memory else []
        assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    finally:
        await store.close()
