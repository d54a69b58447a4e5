"""``ServedAgents``: the bot's agent and the gateway's on one storage, as the edges see them: each
run's calls decided by the agent that owns the run, listings of every agent merged newest first
(paged as one list), the tool of a call looked up in its own agent."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel

from agents import Agent, Approve
from agents.models import ScriptedModel, call, reply
from bot.slack import ServedAgents
from storage import InMemoryStorage, Storage, utcnow
from tools import ToolContext, create_tool


class Target(BaseModel):
    id: str


def _agent(agent_id: str, store: Storage, runs: int, ran: list[str]) -> Agent:
    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        ran.append(f"{agent_id}:{input.id}")
        return {"deleted": input.id}

    script = [call(f"delete_{agent_id}", {"id": str(n)}) for n in range(runs)]
    return Agent(
        id=agent_id,
        model=ScriptedModel([*script, *([reply("done")] * runs)]),
        tools=[
            create_tool(
                id=f"delete_{agent_id}",
                description="Delete",
                input_schema=Target,
                execute=delete,
                require_approval=True,
            )
        ],
        storage=store,
    )


async def test_listings_merge_every_agent_newest_first_and_decisions_reach_the_owner() -> None:
    store, ran = InMemoryStorage(), []
    ops, gateway = _agent("ops", store, 3, ran), _agent("gateway", store, 3, ran)
    started = []
    for n in range(3):  # interleaved: ops, gateway, ops, gateway ...
        started.append((await ops.generate(f"d{n}")).run_id)
        started.append((await gateway.generate(f"d{n}")).run_id)
    agents = ServedAgents(ops, gateway)
    whole = await agents.list_suspended_runs()
    assert whole.total == 6 and [run.run_id for run in whole.runs] == started[::-1]
    pages = [await agents.list_suspended_runs(page=p, per_page=4) for p in range(2)]
    assert [run.run_id for page in pages for run in page.runs] == started[::-1]
    assert {page.total for page in pages} == {6}

    [gateway_run] = [run for run in whole.runs if run.agent_id == "gateway"][:1]
    pending = await agents.pending_call(
        run_id=gateway_run.run_id, tool_call_id=gateway_run.tool_calls[0].tool_call_id
    )
    assert pending is not None and agents.tool_for(pending) is not None
    assert agents.tool_for(pending).id == "delete_gateway"  # type: ignore[union-attr]
    stream = await agents.decide(Approve(), run_id=gateway_run.run_id, decided_by="U2")
    await stream.result()
    assert ran == [f"gateway:{gateway_run.tool_calls[0].args['id']}"]
    assert (await agents.agent_of(gateway_run.run_id)) is gateway
    assert (await agents.list_suspended_runs()).total == 5
    soon = utcnow() + timedelta(minutes=1)  # each call's first look is due by then
    scanned = [run.run_id async for run in agents.every_due_run(soon, per_page=2)]
    assert sorted(scanned) == sorted(r for r in started if r != gateway_run.run_id)


async def test_one_agent_is_served_as_it_is() -> None:
    store, ran = InMemoryStorage(), []
    ops = _agent("ops", store, 1, ran)
    first = await ops.generate("d")
    agents = ServedAgents(ops)
    assert await agents.agent_of(first.run_id) is ops and agents.main is ops
    assert (await agents.list_suspended_runs(page=0, per_page=1)).total == 1
