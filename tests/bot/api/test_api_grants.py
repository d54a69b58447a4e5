"""Standing grants over HTTP (SPEC 15): approve with a grant, list, revoke, through the routes
and through ``bot.client.Client``, refusals as ``GrantNotAllowed`` (403)."""

from __future__ import annotations

from typing import Any

from agents import Agent, GrantNotAllowed, GrantRequest
from agents.models import ScriptedModel, call, reply
from bot.client import Client
from storage import Storage
from tests.bot.api.fixtures import TOKEN, Executions, RecordInput, serve
from tools import ToolContext, create_tool


def _agent(store: Storage, executions: Executions, *, grants: bool = True) -> Agent:
    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        executions.calls.append(("delete-record", input.model_dump()))
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        description="Delete a record by id",
        input_schema=RecordInput,
        require_approval=True,
        execute=delete,
        grants=grants,
    )
    script = [call("delete-record", {"id": "r1"}), reply("done")] * 3
    return Agent(id="ops", model=ScriptedModel(script), tools=[tool], storage=store)


async def test_a_grant_is_created_listed_used_and_revoked_through_the_client(
    store: Storage,
) -> None:
    executions = Executions()
    agent = _agent(store, executions)
    where = {"thread_id": "T1", "resource_id": "C1"}
    async with serve({agent.id: agent}) as http, Client(str(http.make_url("")), TOKEN) as api:
        ops = api.agent("ops")
        first = await agent.generate("x", requested_by="U9", **where)
        [pending] = (await ops.list_suspended_runs(thread_id="T1")).runs[0].tool_calls
        assert pending.grantable is True
        await ops.approve_tool_call(
            run_id=first.run_id,
            tool_call_id=pending.tool_call_id,
            decided_by="U1",
            grant=GrantRequest(seconds=600, max_uses=5, within="resource"),
            wait=True,
        )

        [grant] = await ops.list_grants(resource_id="C1")
        assert (grant.granted_by, grant.max_uses, grant.resource_id) == ("U1", 5, "C1")
        assert grant.pins == {"id": "r1"}
        assert await ops.list_grants(granted_by="U2") == []
        later = await agent.generate("x", requested_by="U9", thread_id="T2", resource_id="C1")
        assert later.finish_reason == "stop"
        with_use = (await ops.list_grants())[0]
        assert with_use.uses == 1

        revoked = await ops.revoke_grant(grant.grant_id, revoked_by="U1")
        assert revoked.revoked_by == "U1" and revoked.revoked_at is not None
        assert await ops.list_grants() == []
        again = await agent.generate("x", requested_by="U9", **where)
        assert again.finish_reason == "suspended"
    assert len(executions.of("delete-record")) == 2


async def test_a_grant_the_rule_does_not_allow_is_403_and_the_call_still_pends(
    store: Storage,
) -> None:
    agent = _agent(store, Executions(), grants=False)
    async with serve({agent.id: agent}) as http:
        first = await agent.generate("x", thread_id="T1", resource_id="C1")
        tool_call_id = first.pending[0].tool_call_id
        response = await http.post(
            "/api/agents/ops/approve-tool-call",
            json={
                "runId": first.run_id,
                "toolCallId": tool_call_id,
                "decidedBy": "U1",
                "grant": {"seconds": 60, "maxUses": 2, "freeArgs": []},
            },
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        body = await response.json()
        assert response.status == 403 and body["code"] == "GRANT_NOT_ALLOWED"
        assert await agent.pending_call(run_id=first.run_id, tool_call_id=tool_call_id)
        async with Client(str(http.make_url("")), TOKEN) as api:
            try:
                await api.agent("ops").approve_tool_call(
                    run_id=first.run_id,
                    tool_call_id=tool_call_id,
                    decided_by="U1",
                    grant=GrantRequest(seconds=60, max_uses=2),
                )
            except GrantNotAllowed as refused:
                assert refused.code == "GRANT_NOT_ALLOWED"
            else:
                raise AssertionError("a grant the rule does not allow was accepted")
            revoking = await http.post(
                "/api/agents/ops/revoke-grant",
                json={"grantId": "nope"},
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert revoking.status == 404
        document = await (
            await http.get("/api/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"})
        ).json()
        assert {"/api/agents/{agent_id}/grants", "/api/agents/{agent_id}/revoke-grant"} <= set(
            document["paths"]
        )
