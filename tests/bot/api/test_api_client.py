"""``bot.client.Client``: every method round-trips, every error comes back as its own class."""

from __future__ import annotations

import hashlib
from datetime import datetime

import aiohttp
import pytest

from agents import (
    Agent,
    AgentConfigError,
    AlreadyDecided,
    ApprovalExpired,
    DuplicateApproval,
    Expire,
    FingerprintMismatch,
    InvalidResumeData,
    InvalidToolArgs,
    ModelError,
    NotAllowedToDecide,
    PendingToolCall,
    RunnerClosed,
    SnapshotNotFound,
    SuspendedRun,
    SuspendedRunsPage,
    ToolCallNotSuspended,
    fingerprint,
)
from agents.models import ScriptedModel, call, reply
from bot import BotError
from bot.api import ApiAccess, error_from
from bot.api._errors import body_of
from bot.client import AgentNotFound, ApiAuthError, ApiRequestError, Client, Decision
from storage import Storage
from tests.bot.api.fixtures import (
    AGENT_ID,
    TOKEN,
    RecordInput,
    api_harness,
    delete_call,
    serve,
    ticket_call,
)
from tools import ToolContext, create_tool


async def test_list_suspended_runs_returns_runtime_objects_with_parsed_datetimes(
    store: Storage,
) -> None:
    script = [delete_call(f"r{i}", f"c{i}") for i in range(3)]
    async with api_harness(store, script) as api, Client(api.base_url, TOKEN) as client:
        for i in range(3):
            await api.suspend(f"delete r{i}", thread_id="t1", resource_id="u1")
        ops = client.agent(AGENT_ID)
        page = await ops.list_suspended_runs(thread_id="t1", page=0, per_page=2)
        assert isinstance(page, SuspendedRunsPage) and page.total == 3 and len(page.runs) == 2
        run = page.runs[0]
        assert isinstance(run, SuspendedRun) and isinstance(run.suspended_at, datetime)
        assert run.suspended_at.tzinfo is not None
        call = run.tool_calls[0]
        assert isinstance(call, PendingToolCall) and isinstance(call.suspended_at, datetime)
        assert call.fingerprint == fingerprint(call.tool_name, call.args)
        direct = await api.agent.list_suspended_runs(thread_id="t1", page=0, per_page=2)
        assert page == direct
        rest = await ops.list_suspended_runs(resource_id="u1", page=1, per_page=2)
        assert len(rest.runs) == 1 and rest.total == 3
        assert (await ops.list_suspended_runs(thread_id="elsewhere")).total == 0


async def test_approve_decline_and_resume_round_trip(store: Storage) -> None:
    script = [
        delete_call("a", "c1"),
        reply("Deleted a."),
        delete_call("b", "c2"),
        reply("Kept b."),
        ticket_call("printer", "t1"),
        reply("Opened."),
    ]
    async with api_harness(store, script) as api, Client(api.base_url, TOKEN) as client:
        ops = client.agent(AGENT_ID)
        first = await api.suspend()
        approved = await ops.approve_tool_call(
            run_id=first.run_id,
            tool_call_id="c1",
            fingerprint=first.pending[0].fingerprint,
            decided_by="alice",
            wait=True,
        )
        assert approved == Decision(
            run_id=first.run_id,
            tool_call_id="c1",
            text="Deleted a.",
            finish_reason="stop",
            pending=[],
        )
        second = await api.suspend()
        declined = await ops.decline_tool_call(
            run_id=second.run_id, tool_call_id="c2", reason="keep it", decided_by="bob"
        )
        assert declined.status == "accepted" and declined.text is None
        await api.settle()
        third = await api.suspend()
        resumed = await ops.resume(
            {"priority": "low"}, run_id=third.run_id, tool_call_id="t1", wait=True
        )
        assert resumed.text == "Opened."
        assert api.executions.calls == [
            ("delete-record", {"id": "a"}),
            ("open-ticket", {"title": "printer", "priority": "low"}),
        ]
        actors = [
            (e.source, e.actor)
            for run in (first, second, third)
            for e in await store.query_audit(run_id=run.run_id)
            if e.kind == "decided"
        ]
        assert actors == [("api", "alice"), ("api", "bob"), ("api", None)]


async def test_pending_call_reads_one_call_and_none_once_it_is_decided(store: Storage) -> None:
    async with api_harness(store, [delete_call("a", "c1"), reply("ok")]) as api:
        first = await api.suspend()
        async with Client(api.base_url, TOKEN) as client:
            ops = client.agent(AGENT_ID)
            call = await ops.pending_call(run_id=first.run_id, tool_call_id="c1")
            assert call == first.pending[0]
            await ops.approve_tool_call(run_id=first.run_id, tool_call_id="c1", wait=True)
            assert await ops.pending_call(run_id=first.run_id, tool_call_id="c1") is None


async def test_approve_with_edited_args_and_pending_after_wait(store: Storage) -> None:
    script = [delete_call("a", "c1"), delete_call("b", "c2"), reply("done")]
    async with api_harness(store, script) as api, Client(api.base_url, TOKEN) as client:
        first = await api.suspend()
        decision = await client.agent(AGENT_ID).approve_tool_call(
            run_id=first.run_id, tool_call_id="c1", args={"id": "edited"}, wait=True
        )
        assert decision.finish_reason == "suspended"
        assert decision.pending is not None
        assert [(p.tool_call_id, p.args) for p in decision.pending] == [("c2", {"id": "b"})]
        assert isinstance(decision.pending[0], PendingToolCall)
        assert api.executions.of("delete-record") == [{"id": "edited"}]


async def test_errors_come_back_as_the_runtime_classes_with_their_details(store: Storage) -> None:
    script = [delete_call("a", "c1"), reply("ok"), ticket_call("printer", "t1")]
    async with api_harness(store, script) as api, Client(api.base_url, TOKEN) as client:
        ops = client.agent(AGENT_ID)
        first = await api.suspend()

        with pytest.raises(SnapshotNotFound) as missing:
            await ops.approve_tool_call(run_id="never", tool_call_id="c1")
        assert missing.value.run_id == "never" and "STORAGE_URL" in str(missing.value)

        with pytest.raises(ToolCallNotSuspended) as not_suspended:
            await ops.decline_tool_call(run_id=first.run_id, tool_call_id="zz")
        assert not_suspended.value.tool_call_id == "zz"

        with pytest.raises(FingerprintMismatch) as mismatch:
            await ops.approve_tool_call(
                run_id=first.run_id, tool_call_id="c1", fingerprint="0" * 64
            )
        assert mismatch.value.given == "0" * 64
        assert mismatch.value.expected == first.pending[0].fingerprint

        with pytest.raises(InvalidToolArgs) as bad_args:
            await ops.approve_tool_call(run_id=first.run_id, tool_call_id="c1", args={"id": []})
        assert bad_args.value.errors[0]["loc"] == ["id"]

        await ops.approve_tool_call(
            run_id=first.run_id, tool_call_id="c1", decided_by="alice", wait=True
        )
        with pytest.raises(AlreadyDecided) as twice:
            await ops.approve_tool_call(run_id=first.run_id, tool_call_id="c1")
        error = twice.value
        assert type(error) is AlreadyDecided and error.code == "APPROVAL_ALREADY_DECIDED"
        assert error.decided_by == "alice" and error.decision == "approved"
        claim = (await store.list_claims(first.run_id))[0]
        assert error.decided_at == claim.decided_at

        ticket = await api.suspend()
        with pytest.raises(InvalidResumeData) as bad_data:
            await ops.resume({"priority": "urgent"}, run_id=ticket.run_id, tool_call_id="t1")
        assert bad_data.value.tool_call_id == "t1" and bad_data.value.errors[0]["loc"] == [
            "priority"
        ]
        with pytest.raises(ToolCallNotSuspended):
            await ops.approve_tool_call(run_id=ticket.run_id, tool_call_id="t1")


async def test_an_expired_call_raises_approval_expired(store: Storage) -> None:
    async with api_harness(store, [delete_call("a", "c1"), reply("expired")]) as api:
        first = await api.suspend()
        await (
            await api.agent.decide(
                Expire(), run_id=first.run_id, tool_call_id="c1", source="expiry"
            )
        ).result()
        async with Client(api.base_url, TOKEN) as client:
            with pytest.raises(ApprovalExpired) as info:
                await client.agent(AGENT_ID).approve_tool_call(
                    run_id=first.run_id, tool_call_id="c1"
                )
        assert info.value.code == "APPROVAL_EXPIRED" and info.value.decision == "expired"
        assert info.value.decided_at.tzinfo is not None


async def test_edge_errors_are_bot_errors(store: Storage) -> None:
    async with api_harness(store, []) as api:
        async with Client(api.base_url, "wrong-token") as client:
            with pytest.raises(ApiAuthError) as auth:
                await client.agent(AGENT_ID).list_suspended_runs()
        assert auth.value.status == 401 and isinstance(auth.value, BotError)
        async with Client(api.base_url, TOKEN) as client:
            with pytest.raises(AgentNotFound) as unknown:
                await client.agent("nobody").list_suspended_runs()
            assert unknown.value.status == 404 and unknown.value.code == "AGENT_NOT_FOUND"
            with pytest.raises(ApiRequestError) as bad:
                await client.agent(AGENT_ID).approve_tool_call(
                    run_id="r", tool_call_id="c", decided_by=""
                )
            assert bad.value.status == 400 and bad.value.body["errors"]
            with pytest.raises(AgentNotFound):
                await client.agent("a/b c").list_suspended_runs()
            assert (await client.openapi())["openapi"] == "3.1.0"


async def test_the_client_closes_only_a_session_it_created(store: Storage) -> None:
    async with api_harness(store, []) as api:
        async with aiohttp.ClientSession() as session:
            async with Client(api.base_url, TOKEN, session=session) as client:
                await client.agent(AGENT_ID).list_suspended_runs()
            assert not session.closed
        own = Client(api.base_url, TOKEN)
        await own.agent(AGENT_ID).list_suspended_runs()
        created = own._session
        assert created is not None
        await own.close()
        assert created.closed


async def test_quorum_and_policy_refusals_come_back_as_the_runtime_classes(store: Storage) -> None:
    async def wipe(input: RecordInput, ctx: ToolContext) -> dict[str, str]:
        return {"wiped": input.id}

    tool = create_tool(
        id="wipe",
        description="Wipe",
        input_schema=RecordInput,
        require_approval=True,
        approvals=2,
        execute=wipe,
    )
    agent = Agent(
        id=AGENT_ID,
        model=ScriptedModel([call("wipe", {"id": "a"}, id="c1"), reply("ok")]),
        tools=[tool],
        storage=store,
        decision_policy=lambda call, by, kind: "U9 is on leave" if by == "U9" else None,
    )
    first = await agent.generate("wipe a")
    access = ApiAccess(
        service_sha256=hashlib.sha256(TOKEN.encode()).hexdigest(),
        acts_for_users=True,
        people=((hashlib.sha256(b"u2-token").hexdigest(), "U2"),),
    )
    ids = {"run_id": first.run_id, "tool_call_id": "c1"}
    async with serve({AGENT_ID: agent}, access=access) as http:
        base = str(http.make_url("")).rstrip("/")
        async with Client(base, TOKEN) as service, Client(base, "u2-token") as u2:
            with pytest.raises(NotAllowedToDecide) as refused:
                await service.agent(AGENT_ID).approve_tool_call(**ids, decided_by="U9")
            assert (refused.value.rule, refused.value.reason) == ("policy", "U9 is on leave")
            with pytest.raises(NotAllowedToDecide) as impersonated:
                await u2.agent(AGENT_ID).approve_tool_call(**ids, decided_by="U3")
            assert impersonated.value.rule == "other-person"
            with pytest.raises(AgentConfigError):  # a quorum approval naming no one
                await service.agent(AGENT_ID).approve_tool_call(**ids)
            await u2.agent(AGENT_ID).approve_tool_call(**ids)
            with pytest.raises(DuplicateApproval) as twice:
                await service.agent(AGENT_ID).approve_tool_call(**ids, decided_by="U2")
            duplicate = twice.value
            assert (duplicate.approver, duplicate.approved_by, duplicate.needed) == (
                "U2",
                ["U2"],
                2,
            )
        await agent.drain()


def test_any_runtime_error_comes_back_as_its_class_with_its_details() -> None:
    sent = ModelError("the provider failed", status=503, request_id="req-1")
    body = body_of(sent)
    assert (body["status"], body["requestId"]) == (503, "req-1")
    rebuilt = error_from(500, body)
    assert type(rebuilt) is ModelError and str(rebuilt) == str(sent)
    assert (rebuilt.status, rebuilt.request_id) == (503, "req-1")
    closed = error_from(500, body_of(RunnerClosed("resume")))
    assert type(closed) is RunnerClosed and closed.name == "resume"
