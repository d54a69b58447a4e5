"""SPEC 3.4: each state change of a run is ONE transaction, counted on SQLite."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event

from agents import Agent
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import SQLStorage
from tests.agents.conftest import Executions
from tools import Tool


class Counter:
    """Statements and commits; a write transaction is one ``BEGIN IMMEDIATE`` on SQLite."""

    def __init__(self) -> None:
        self.commits = 0
        self.statements: list[str] = []

    @property
    def write_transactions(self) -> int:
        return self.statements.count("BEGIN IMMEDIATE")


@contextmanager
def counting(store: SQLStorage) -> Iterator[Counter]:
    counter = Counter()
    engine = store.engine.sync_engine

    def on_commit(conn: Any) -> None:
        counter.commits += 1

    def on_statement(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        counter.statements.append(statement.strip())

    event.listen(engine, "commit", on_commit)
    event.listen(engine, "before_cursor_execute", on_statement)
    try:
        yield counter
    finally:
        event.remove(engine, "commit", on_commit)
        event.remove(engine, "before_cursor_execute", on_statement)


async def test_suspend_decide_and_complete_are_one_commit_each(
    tmp_path: Path, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'tx.db'}")
    await store.migrate()
    tool = make_tool(require_approval=True)
    try:
        first_agent = Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1")]),
            tools=[tool],
            storage=store,
        )
        with counting(store) as suspend:
            first = await first_agent.generate("delete 1", requested_by="U1")
        assert first.finish_reason == "suspended"
        assert suspend.write_transactions == 1  # snapshot + requester + audit, together

        second = Agent(id="ops", model=ScriptedModel([reply("done")]), tools=[tool], storage=store)
        with counting(store) as decide:
            stream = await second.approve_tool_call(run_id=first.run_id, decided_by="U2")
        assert decide.write_transactions == 1  # claim + audit
        with counting(store) as complete:
            done = await stream.result()
        assert done.finish_reason == "stop" and executions.of("delete-record") == [{"id": "1"}]
        assert complete.write_transactions == 1  # outcome + snapshot deleted + audit
    finally:
        await store.close()


async def test_with_memory_the_thread_is_written_with_the_state_changes(
    tmp_path: Path, make_tool: Callable[..., Tool]
) -> None:
    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'tx.db'}")
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
        with counting(store) as suspend:
            first = await agent.generate("delete 1", thread_id="t1")
        assert (
            suspend.write_transactions == 1
        )  # snapshot + audit + thread + user and assistant messages
        with counting(store) as rest:
            await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
        assert rest.write_transactions == 3  # claim; outcome + tool message; the final answer
        history = await agent.memory.messages("t1") if agent.memory else []
        assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    finally:
        await store.close()
