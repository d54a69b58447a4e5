"""SPEC 3.4 on every backend: stored before announced, compact, gone when the run finishes."""

import json
from collections.abc import Callable

from agents import Agent
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from storage import Storage
from tests.agents.conftest import Executions
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tools import Tool


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


async def test_fifty_concurrent_approvals_run_the_tool_once_on_every_backend(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    import asyncio

    from agents import AlreadyDecided

    def agent() -> Agent:
        return Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": "42"}), reply("Deleted.")]),
            tools=[make_tool(require_approval=True)],
            storage=storage,
        )

    first = await agent().generate("delete 42")
    racers = [agent() for _ in range(50)]  # fifty "instances" over one store
    outcomes = await asyncio.gather(
        *(
            a.approve_tool_call(run_id=first.run_id, decided_by=f"U{i}")
            for i, a in enumerate(racers)
        ),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, AlreadyDecided)]
    assert len(winners) == 1 and len(losers) == 49
    winner = winners[0]
    assert not isinstance(winner, BaseException)
    await winner.result()
    assert {loser.decided_by for loser in losers} == {f"U{outcomes.index(winner)}"}
    assert executions.of("delete-record") == [{"id": "42"}]


async def test_the_audit_log_records_request_decision_and_execution(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("delete-record", {"id": "42"}, id="c1"), reply("Deleted.")]),
        tools=[make_tool(require_approval=True)],
        storage=storage,
    )
    first = await agent.generate("delete 42", thread_id="t-audit", resource_id="u")
    await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U7", source="button")
    events = await storage.query_audit(run_id=first.run_id)
    assert [e.kind for e in events] == ["approval-requested", "decided", "executed"]
    requested, decided, executed = events
    assert requested.data["args"] == {"id": "42"} and requested.tool_call_id == "c1"
    assert (decided.actor, decided.source, decided.data["decision"]) == ("U7", "button", "approved")
    assert executed.data["status"] == "ok"
    assert executed.data["args_fingerprint"] == requested.data["fingerprint"]
    assert [e.kind for e in await storage.query_audit(tool_call_id="c1")] == [
        e.kind for e in events
    ]
    assert len(await storage.query_audit(thread_id="t-audit")) == 3
    assert (
        await storage.query_audit(run_id=first.run_id, since=executed.at, until=executed.at) == []
    )


async def test_a_suspended_tool_is_resumed_by_a_new_agent_after_a_restart(
    storage_url: str,  # noqa: F811
) -> None:
    from tests.agents.test_suspend_resume import Ticketing
    from tests.backends import open_storage, survives_reopen

    if not survives_reopen(storage_url):
        return
    ticketing = Ticketing()
    async with open_storage(storage_url) as first_store:
        before = Agent(
            id="ops",
            model=ScriptedModel([call("open-ticket", {"title": "printer"})]),
            tools=[ticketing.tool()],
            storage=first_store,
        )
        run = await before.generate("open a printer ticket")
    async with open_storage(storage_url) as second_store:
        after = Agent(
            id="ops",
            model=ScriptedModel([reply("Opened.")]),
            tools=[ticketing.tool()],
            storage=second_store,
        )
        listed = await after.list_suspended_runs()
        assert listed.runs[0].tool_calls[0].suspend_payload == run.pending[0].suspend_payload
        done = await after.resume_generate({"priority": "low"}, run_id=run.run_id)
    assert done.text == "Opened."
    assert ticketing.opened == [{"title": "printer", "priority": "low"}]
