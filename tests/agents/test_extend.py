"""Extend (SPEC 12, round 4): those who may approve a pending call may keep it decidable for
longer, by its rule's TTL once more, never past the rule's maximum; audited; on every backend,
and once across instances racing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agents import (
    Agent,
    AlreadyDecided,
    ApprovalExpired,
    CallRules,
    CannotExtend,
    NotAllowedToDecide,
    PendingToolCall,
    ServedParts,
)
from agents.models import ScriptedModel, call, reply
from storage import Storage, utcnow
from tests.agents.conftest import Executions
from tests.backends import SHARED_BACKENDS, open_storage, storage, storage_url, unique_url  # noqa: F401
from tools import Tool

HOUR = 3600.0


def _only_u9(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
    return None if decided_by == "U9" else "approvers: only U9 may approve"


def _agent(
    store: Storage, tool: Tool, *, ttl: float = HOUR, most: float | None = 3 * HOUR
) -> Agent:
    agent = Agent(
        id="ops",
        model=ScriptedModel([call(tool.id, {"id": "abc-123"}, id="c1"), reply("Deleted.")]),
        tools=[tool],
        storage=store,
        decision_policy=_only_u9,
    )
    rules = CallRules(require_approval=True, ttl_seconds=ttl, max_ttl_seconds=most)
    return agent.served(ServedParts(call_rules=lambda name, tool_id, path, args: rules))


async def test_an_approver_extends_a_call_by_its_ttl_and_it_is_audited_and_due(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    agent = _agent(storage, make_tool())
    first = await agent.generate("delete abc-123", requested_by="U1")
    [shown] = first.pending
    assert shown.expires_at is not None and shown.suspended_at is not None

    before = utcnow()
    extended = await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")

    assert extended.expires_at is not None
    assert before + timedelta(seconds=HOUR) <= extended.expires_at
    assert extended.expires_at == shown.expires_at + timedelta(seconds=HOUR)  # the TTL once more
    assert extended.expires_at > shown.expires_at
    stored = await agent.pending_call(run_id=first.run_id, tool_call_id="c1")
    assert stored is not None and stored.expires_at == extended.expires_at
    [event] = [e for e in await storage.query_audit(run_id=first.run_id) if e.kind == "extended"]
    assert (event.actor, event.tool_call_id) == ("U9", "c1")
    assert event.data["expires_at"] == extended.expires_at.isoformat()
    assert event.data["previous_expires_at"] == shown.expires_at.isoformat()
    record = await storage.load_snapshot(first.run_id)
    assert record is not None and record.due_at is not None  # the sweep still reads it
    assert record.due_at <= extended.expires_at
    due = await agent.list_due_runs(until=extended.expires_at)
    assert [r.run_id for r in due] == [first.run_id]
    # the call is still decidable, and decided as usual
    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U9")
    assert done.text == "Deleted." and executions.of("delete-record") == [{"id": "abc-123"}]


async def test_someone_who_may_not_approve_may_not_extend(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool())
    first = await agent.generate("delete abc-123", requested_by="U1")

    with pytest.raises(NotAllowedToDecide) as info:
        await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U2")

    assert "only U9" in str(info.value)
    stored = await agent.pending_call(run_id=first.run_id, tool_call_id="c1")
    assert stored is not None and stored.expires_at == first.pending[0].expires_at
    events = await storage.query_audit(run_id=first.run_id)
    assert [e for e in events if e.kind == "extended"] == []


@pytest.mark.parametrize(
    ("ttl", "most"), [(HOUR, None), (HOUR, HOUR)], ids=["no-maximum", "maximum-is-the-ttl"]
)
async def test_a_rule_without_a_longer_maximum_allows_no_extension(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    ttl: float,
    most: float | None,
) -> None:
    agent = _agent(storage, make_tool(), ttl=ttl, most=most)
    first = await agent.generate("delete abc-123", requested_by="U1")

    with pytest.raises(CannotExtend) as info:
        await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")

    assert info.value.code == "APPROVAL_CANNOT_EXTEND"
    assert "max_ttl_seconds" in str(info.value)


async def test_a_call_at_its_maximum_is_not_extended_again(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    most = HOUR + 1e-6  # now + ttl is past the maximum as soon as the call has been presented
    agent = _agent(storage, make_tool(), ttl=HOUR, most=most)
    first = await agent.generate("delete abc-123", requested_by="U1")
    [shown] = first.pending
    assert shown.suspended_at is not None

    extended = await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")

    assert extended.expires_at == shown.suspended_at + timedelta(seconds=most)
    with pytest.raises(CannotExtend) as info:
        await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")
    assert "the most its rule allows" in str(info.value)


async def test_a_decided_or_expired_call_is_not_extended(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
) -> None:
    agent = _agent(storage, make_tool())
    first = await agent.generate("delete abc-123", requested_by="U1")
    await agent.decline_tool_call_generate(run_id=first.run_id, decided_by="U9")
    with pytest.raises(AlreadyDecided):
        await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")

    brief = _agent(storage, make_tool(), ttl=0.05, most=HOUR)
    second = await brief.generate("delete abc-123", requested_by="U1")
    await asyncio.sleep(0.1)  # past expires_at; no sweep ran
    with pytest.raises(ApprovalExpired):
        await brief.extend_tool_call(run_id=second.run_id, tool_call_id="c1", by="U9")


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_two_instances_extending_at_once_move_it_once_to_the_maximum(
    backend: str, tmp_path: Path, make_tool: Callable[..., Tool]
) -> None:
    most = HOUR + 1e-6  # any extend after presentation reaches the maximum
    async with (
        unique_url(backend, tmp_path) as url,
        open_storage(url) as one,
        open_storage(url) as two,
    ):
        first = await _agent(one, make_tool(), most=most).generate("delete", requested_by="U1")
        instances = [_agent(store, make_tool(), most=most) for store in (one, two)]

        async def extend(agent: Agent) -> Any:
            try:
                return await agent.extend_tool_call(run_id=first.run_id, tool_call_id="c1", by="U9")
            except CannotExtend as refused:
                return refused

        answers = await asyncio.gather(*(extend(a) for a in instances))

        moved = [a for a in answers if isinstance(a, PendingToolCall)]
        assert len(moved) == 1, answers
        assert [type(a) for a in answers if a not in moved] == [CannotExtend]
        [shown] = first.pending
        assert shown.suspended_at is not None
        cap = shown.suspended_at + timedelta(seconds=most)
        stored = await instances[1].pending_call(run_id=first.run_id, tool_call_id="c1")
        assert stored is not None and stored.expires_at == cap == moved[0].expires_at
        events = await one.query_audit(run_id=first.run_id)
        assert len([e for e in events if e.kind == "extended"]) == 1
