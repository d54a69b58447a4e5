"""``Agent.decide_many``: several calls of one run in one transaction, all or nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import (
    Agent,
    AgentConfigError,
    AlreadyDecided,
    ApprovalExpired,
    Approve,
    Decline,
    DuplicateApproval,
    FingerprintMismatch,
    NotAllowedToDecide,
    PendingToolCall,
)
from agents.models import ScriptedModel, call, calls, reply
from storage import Storage
from tests.agents.conftest import Executions, RecordInput
from tests.backends import SHARED_BACKENDS, open_storage, storage, storage_url, unique_url  # noqa: F401
from tools import Tool, ToolContext, create_tool


def _step(*ids: str) -> Any:
    return calls(*(call("delete-record", {"id": i}, id=i) for i in ids))


def _agent(store: Storage, tools: list[Tool], *script: Any, **options: Any) -> Agent:
    return Agent(id="ops", model=ScriptedModel([*script]), tools=tools, storage=store, **options)


def _quorum_tool(executions: Executions) -> Tool:
    async def execute(input: BaseModel, ctx: ToolContext) -> Any:
        executions.calls.append(("wipe", input.model_dump()))
        return {"wiped": True}

    return create_tool(
        id="wipe",
        description="wipe",
        input_schema=RecordInput,
        execute=execute,
        require_approval=True,
        approvals=2,
    )


async def _decided(store: Storage, run_id: str) -> dict[str | None, str]:
    return {c.tool_call_id: c.decision for c in await store.list_claims(run_id)}


async def test_approve_and_decline_together_run_the_step_once_and_go_on(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    model_script = [_step("a", "b", "c"), reply("done")]
    agent = _agent(storage, [make_tool(require_approval=True)], *model_script)
    first = await agent.generate("delete a, b and c")
    assert {p.tool_call_id for p in first.pending} == {"a", "b", "c"}

    stream = await agent.decide_many(
        run_id=first.run_id,
        decisions={"a": Approve(), "b": Decline(reason="keep b"), "c": Approve()},
        decided_by="U1",
        fingerprints={p.tool_call_id: p.fingerprint for p in first.pending},
    )
    done = await stream.result()

    assert done.finish_reason == "stop" and done.text == "done"
    assert sorted(a["id"] for a in executions.of("delete-record")) == ["a", "c"]
    assert await _decided(storage, first.run_id) == {
        "a": "approved",
        "b": "declined",
        "c": "approved",
    }
    decided = [e for e in await storage.query_audit(run_id=first.run_id) if e.kind == "decided"]
    assert {e.tool_call_id for e in decided} == {"a", "b", "c"}
    assert all(e.actor == "U1" for e in decided)


async def test_a_call_decided_first_refuses_the_whole_batch_naming_it(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = _agent(storage, [make_tool(require_approval=True)], _step("a", "b", "c"), reply("ok"))
    first = await agent.generate("go")
    await (await agent.decline_tool_call(run_id=first.run_id, tool_call_id="b")).result()

    with pytest.raises(AlreadyDecided) as refused:
        await agent.decide_many(
            run_id=first.run_id, decisions={"a": Approve(), "b": Approve(), "c": Approve()}
        )

    assert refused.value.tool_call_id == "b" and "'b'" in str(refused.value)
    assert await _decided(storage, first.run_id) == {"b": "declined"}
    assert executions.calls == []
    still = {p.tool_call_id for r in (await agent.list_suspended_runs()).runs for p in r.tool_calls}
    assert still == {"a", "c"}


async def test_a_wrong_fingerprint_refuses_everything_naming_the_call(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = _agent(storage, [make_tool(require_approval=True)], _step("a", "b"), reply("ok"))
    first = await agent.generate("go")
    prints = {p.tool_call_id: p.fingerprint for p in first.pending}

    with pytest.raises(FingerprintMismatch) as refused:
        await agent.decide_many(
            run_id=first.run_id,
            decisions={"a": Approve(), "b": Approve()},
            fingerprints={**prints, "b": "0" * 64},
        )

    assert refused.value.tool_call_id == "b"
    assert await storage.list_claims(first.run_id) == []
    assert executions.calls == []


async def test_a_refusing_policy_on_one_call_records_none(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    def policy(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        return "not b" if call.args == {"id": "b"} else None

    agent = _agent(
        storage,
        [make_tool(require_approval=True)],
        _step("a", "b"),
        reply("ok"),
        decision_policy=policy,
    )
    first = await agent.generate("go")

    with pytest.raises(NotAllowedToDecide) as refused:
        await agent.decide_many(
            run_id=first.run_id, decisions={"a": Approve(), "b": Approve()}, decided_by="U1"
        )

    assert refused.value.tool_call_id == "b"
    assert await storage.list_claims(first.run_id) == []


async def test_an_expired_call_refuses_the_batch(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, [make_tool(require_approval=True)], _step("a", "b"), reply("ok"))
    first = await agent.generate("go", approval_ttl_seconds=0.001)
    await asyncio.sleep(0.01)

    with pytest.raises(ApprovalExpired):
        await agent.decide_many(run_id=first.run_id, decisions={"a": Approve(), "b": Approve()})

    assert await storage.list_claims(first.run_id) == []


async def test_a_quorum_call_in_a_batch_gets_one_approval_and_stays_pending(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    step = calls(call("delete-record", {"id": "a"}, id="a"), call("wipe", {"id": "w"}, id="w"))
    tools = [make_tool(require_approval=True), _quorum_tool(executions)]
    agent = _agent(storage, tools, step, reply("all done"))
    first = await agent.generate("go")

    partly = await (
        await agent.decide_many(
            run_id=first.run_id, decisions={"a": Approve(), "w": Approve()}, decided_by="U1"
        )
    ).result()

    assert partly.finish_reason == "suspended"
    assert executions.of("delete-record") == [{"id": "a"}] and executions.of("wipe") == []
    (waiting,) = partly.pending
    assert (waiting.tool_call_id, waiting.approved_by) == ("w", ["U1"])
    with pytest.raises(DuplicateApproval) as again:
        await agent.decide_many(run_id=first.run_id, decisions={"w": Approve()}, decided_by="U1")
    assert again.value.tool_call_id == "w"

    done = await (
        await agent.decide_many(run_id=first.run_id, decisions={"w": Approve()}, decided_by="U2")
    ).result()

    assert done.text == "all done"
    assert executions.of("wipe") == [{"id": "w"}]
    claims = {c.tool_call_id: c for c in await storage.list_claims(first.run_id)}
    assert claims["w"].detail["approved_by"] == ["U1", "U2"]


async def test_edits_resumes_and_unknown_fingerprints_are_refused_before_anything(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, [make_tool(require_approval=True)], _step("a", "b"), reply("ok"))
    first = await agent.generate("go")
    for decisions, fingerprints in (
        ({"a": Approve(args={"id": "z"})}, {}),
        ({"a": Decline(withdrawn=True)}, {}),
        ({}, {}),
        ({"a": Approve()}, {"b": "f" * 64}),
    ):
        with pytest.raises(AgentConfigError):
            await agent.decide_many(
                run_id=first.run_id,
                decisions=decisions,  # type: ignore[arg-type]
                fingerprints=fingerprints,
            )
    assert await storage.list_claims(first.run_id) == []


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_instances_race_a_batch_against_a_single_decision(
    backend: str,
    tmp_path: Path,
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    """Instance A decides a, b, c at once while instance B approves b alone: exactly one
    wins b, and A's batch is either whole or absent."""
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as one,
        open_storage(url) as two,
    ):
        for round_ in range(6):
            ids = [f"a{round_}", f"b{round_}", f"c{round_}"]
            tool = make_tool(require_approval=True)
            starter = _agent(one, [tool], _step(*ids), reply("ok"), reply("ok"))
            first = await starter.generate("go")
            a = _agent(one, [tool], reply("ok"))
            b = _agent(two, [tool], reply("ok"))
            batch, single = await asyncio.gather(
                a.decide_many(run_id=first.run_id, decisions={i: Approve() for i in ids}),
                b.approve_tool_call(run_id=first.run_id, tool_call_id=ids[1]),
                return_exceptions=True,
            )
            decided = await _decided(one, first.run_id)
            if isinstance(batch, BaseException):
                assert isinstance(batch, AlreadyDecided) and batch.tool_call_id == ids[1]
                assert not isinstance(single, BaseException)
                assert list(decided) == [ids[1]]
                await single.result()
            else:
                assert isinstance(single, AlreadyDecided)
                assert set(decided) == set(ids)
                await batch.result()
            await a.drain()
            await b.drain()
        ran = [args["id"] for args in executions.of("delete-record")]
        assert len(ran) == len(set(ran))  # no call ran twice


async def test_a_quorum_another_approval_completes_meanwhile_is_claimed_and_runs_once(
    executions: Executions,
) -> None:
    """A single approval committed between the batch's read and its commit: each saw one
    approval of two, so neither claimed, and the call was left pending with its quorum met.
    The batch now looks again after its commit and claims it (exactly one of them runs it)."""
    from storage import BatchRefusal, DecisionBatch, InMemoryStorage

    class ApprovedMeanwhile(InMemoryStorage):
        meanwhile: Any = None

        async def commit_batch(self, batch: DecisionBatch) -> BatchRefusal | None:
            hook, self.meanwhile = self.meanwhile, None
            if hook is not None:
                await hook()  # another instance's approval lands first
            return await super().commit_batch(batch)

    store = ApprovedMeanwhile()
    tools = [_quorum_tool(executions)]
    agent = _agent(store, tools, call("wipe", {"id": "w"}, id="w"), reply("all done"))
    other = _agent(store, tools)
    first = await agent.generate("go")

    async def single() -> None:
        alone = await other.approve_tool_call(run_id=first.run_id, decided_by="U2")
        assert (await alone.result()).finish_reason == "suspended"  # one of two: it waits

    store.meanwhile = single
    done = await (
        await agent.decide_many(run_id=first.run_id, decisions={"w": Approve()}, decided_by="U1")
    ).result()

    assert done.finish_reason == "stop" and done.text == "all done"
    assert executions.of("wipe") == [{"id": "w"}]
    [claim] = [c for c in await store.list_claims(first.run_id) if c.tool_call_id == "w"]
    assert claim.decided_by == "U1" and sorted(claim.detail["approved_by"]) == ["U1", "U2"]
