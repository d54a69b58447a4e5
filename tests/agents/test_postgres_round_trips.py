"""SPEC 3.4 on PostgreSQL: each state change of a run is ONE statement, ONE round trip."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import Storage
from tests.agents.conftest import Executions
from tests.backends import POSTGRES_ENV, unique_url
from tests.postgres_trace import traced_postgres
from tools import Tool

pytestmark = pytest.mark.skipif(not os.environ.get(POSTGRES_ENV), reason=f"set {POSTGRES_ENV}")


async def test_suspend_decide_and_complete_are_one_round_trip_each(
    tmp_path: Path, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    async with unique_url("postgres", tmp_path) as url:
        store, tap = traced_postgres(url)
        tool = make_tool(require_approval=True)
        try:
            # asyncpg prepares a statement on its first run on a connection (a round trip)
            await _cycle(store, tool, "warm-up")
            with tap.counting() as suspend:  # snapshot + requester + audit
                first = await _agent(store, tool, call("delete-record", {"id": "1"})).generate(
                    "delete 1", requested_by="U1"
                )
            assert first.finish_reason == "suspended"
            second = _agent(store, tool, reply("done"))
            with tap.counting() as decide:  # the run read, then claim + audit
                stream = await second.approve_tool_call(run_id=first.run_id, decided_by="U2")
            with tap.counting() as complete:  # outcome + snapshot deleted + audit
                done = await stream.result()
        finally:
            await store.close()

    assert done.finish_reason == "stop" and executions.of("delete-record")[-1] == {"id": "1"}
    functions = [
        [s.sql.split("(")[0] for s in part.statements] for part in (suspend, decide, complete)
    ]
    assert functions == [
        ["SELECT countersign_commit"],
        ["SELECT countersign_load_run", "SELECT countersign_commit"],
        ["SELECT countersign_commit"],
    ]
    assert [part.round_trips for part in (suspend, decide, complete)] == [1, 2, 1]
    assert suspend.autocommitted and decide.autocommitted and complete.autocommitted


def _agent(store: Storage, tool: Tool, step: Any) -> Agent:
    return Agent(id="ops", model=ScriptedModel([step]), tools=[tool], storage=store)


async def _cycle(store: Storage, tool: Tool, record: str) -> None:
    first = await _agent(store, tool, call("delete-record", {"id": record})).generate("delete")
    await _agent(store, tool, reply("done")).approve_tool_call_generate(
        run_id=first.run_id, decided_by="U2"
    )
