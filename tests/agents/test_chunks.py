"""Typed chunks: one class per ``type`` with typed fields, and the same ``payload`` as before."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from agents import (
    Agent,
    Chunk,
    ErrorChunk,
    FinishChunk,
    Payload,
    PendingToolCall,
    StartChunk,
    StepFinishChunk,
    TextDeltaChunk,
    ToolCallApprovalChunk,
    ToolCallChunk,
    ToolCallResumedChunk,
    ToolCallSuspendedChunk,
    ToolOutputDeniedChunk,
    ToolResultChunk,
    fingerprint,
)
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.test_suspend_resume import Ticketing
from tools import Tool

PAYLOAD_KEYS = {
    "start": set(),
    "text-delta": {"text"},
    "tool-call": {"tool_call_id", "tool_name", "args"},
    "tool-call-approval": {
        "tool_call_id",
        "tool_name",
        "args",
        "fingerprint",
        "resume_schema",
        "agent_path",
        # SPEC 3.3: the approval chunk carries every field of the pending call it announces.
        "definition_digest",
        "requested_by",
        "expires_at",
        "approvals_required",
        "approved_by",
        "edited_from",
        "suspend_payload",
        "grantable",
        "grant_max_seconds",
        "grant_max_uses",
        "requires_approval",
        "suspended_at",
        "escalation_step",
        "escalated_approvers",
        "edited_by",
        "requirement",
    },
    "tool-call-granted": {
        "tool_call_id",
        "tool_name",
        "args",
        "grant_id",
        "granted_by",
        "uses",
        "max_uses",
        "expires_at",
    },
    "tool-call-suspended": {
        "tool_call_id",
        "tool_name",
        "args",
        "suspend_payload",
        "resume_schema",
        "agent_path",
    },
    "tool-call-resumed": {"tool_call_id", "tool_name", "kind"},
    "tool-result": {"tool_call_id", "tool_name", "result"},
    "tool-output-denied": {"tool_call_id", "tool_name", "reason"},
    "step-finish": {"finish_reason"},
    "finish": {"finish_reason"},
    "error": {"error"},
}


def _describe(chunk: Chunk) -> str:
    match chunk:
        case ToolCallApprovalChunk(tool_name=name, agent_path=path):
            return f"approve {name} in {'/'.join(path)}"
        case TextDeltaChunk(text=text):
            return f"text {text}"
        case _:
            return chunk.type


async def test_every_chunk_is_typed_and_its_payload_holds_the_same_keys_as_before(
    make_tool: Callable[..., Tool],
) -> None:
    agent = Agent(
        id="ops",
        model=ScriptedModel(
            [reply("Hi. "), call("delete-record", {"id": "abc-123"}, id="c1"), reply("Done.")]
        ),
        tools=[make_tool(require_approval=True)],
        storage=InMemoryStorage(),
    )
    hello = await agent.stream("hi")
    first = [c async for c in hello.full_stream]
    assert [type(c) for c in first[:2]] == [StartChunk, TextDeltaChunk]
    assert [type(c) for c in first[-2:]] == [StepFinishChunk, FinishChunk]
    assert "".join(c.text for c in first if isinstance(c, TextDeltaChunk)) == "Hi. "
    suspended = await agent.stream("delete abc-123")
    second = [c async for c in suspended.full_stream]
    approval = next(c for c in second if isinstance(c, ToolCallApprovalChunk))
    assert approval.type == "tool-call-approval"
    assert (approval.tool_call_id, approval.tool_name, approval.args) == (
        "c1",
        "delete-record",
        {"id": "abc-123"},
    )
    assert approval.fingerprint == fingerprint("delete-record", {"id": "abc-123"})
    assert approval.agent_path == ["ops"] and approval.resume_schema is None
    assert isinstance(approval.payload, Payload)
    assert approval.payload == {
        "tool_call_id": "c1",
        "tool_name": "delete-record",
        "args": {"id": "abc-123"},
        "fingerprint": approval.fingerprint,
        "resume_schema": None,
        "agent_path": ["ops"],
        "definition_digest": agent.tools["delete-record"].definition_digest,
        "requested_by": None,
        "expires_at": None,
        "approvals_required": 1,
        "approved_by": [],
        "edited_from": None,
        "suspend_payload": None,
        "grantable": False,
        "grant_max_seconds": None,
        "grant_max_uses": None,
        "requires_approval": True,
        "suspended_at": approval.suspended_at,
        "escalation_step": 0,
        "escalated_approvers": [],
        "edited_by": None,
        "requirement": approval.requirement,
    }
    assert approval.requirement.reasons == ["delete-record always needs approval"]
    assert set(approval.payload) == set(PendingToolCall.model_fields)
    assert approval.payload.tool_call_id == approval["payload"]["tool_call_id"] == "c1"
    assert approval["type"] == "tool-call-approval" and approval["run_id"] == suspended.run_id
    assert _describe(approval) == "approve delete-record in ops"

    decided = await agent.approve_tool_call(run_id=suspended.run_id)
    third = [c async for c in decided.full_stream]
    resumed = next(c for c in third if isinstance(c, ToolCallResumedChunk))
    assert (resumed.tool_call_id, resumed.kind) == ("c1", "approval")
    result = next(c for c in third if isinstance(c, ToolResultChunk))
    assert result.result == {"ok": True, "id": "abc-123"}
    calls = [c for c in second if isinstance(c, ToolCallChunk)]
    assert calls[0].payload == {
        "tool_call_id": "c1",
        "tool_name": "delete-record",
        "args": {"id": "abc-123"},
    }
    for chunk in [*first, *second, *third]:
        assert isinstance(chunk, Chunk)
        assert set(chunk.payload) == PAYLOAD_KEYS[chunk.type], chunk.type
        assert chunk.run_id in (hello.run_id, suspended.run_id)
        assert dataclasses.is_dataclass(chunk)


async def test_suspended_denied_and_error_chunks_carry_their_fields(
    make_tool: Callable[..., Tool],
) -> None:
    ticketing = Ticketing()
    agent = Agent(
        id="ops",
        model=ScriptedModel(
            [
                call("open-ticket", {"title": "printer"}, id="t1"),
                call("delete-record", {"id": "x"}, id="c2"),
                reply("no"),
            ]
        ),
        tools=[ticketing.tool(), make_tool(require_approval=True)],
        storage=InMemoryStorage(),
    )
    stream = await agent.stream("ticket")
    (suspended,) = [c async for c in stream.full_stream if isinstance(c, ToolCallSuspendedChunk)]
    assert suspended.suspend_payload == {"question": "What priority for 'printer'? (1)"}
    assert suspended.resume_schema is not None and suspended.agent_path == ["ops"]
    assert suspended.payload.suspend_payload == suspended.suspend_payload

    resumed = await agent.resume_stream({"priority": "low"}, run_id=stream.run_id)
    await resumed.result()
    declined = await agent.decline_tool_call(run_id=stream.run_id, reason="no way")
    (denied,) = [c async for c in declined.full_stream if isinstance(c, ToolOutputDeniedChunk)]
    assert (denied.tool_call_id, denied.reason) == ("c2", "no way")

    broken = Agent(id="b", model=ScriptedModel([]), storage=InMemoryStorage())
    failed = await broken.stream("hi")
    chunks: list[Any] = [c async for c in failed.full_stream]
    error = next(c for c in chunks if isinstance(c, ErrorChunk))
    assert error.payload["error"] is error.error
    assert chunks[-1] == FinishChunk(run_id=failed.run_id, finish_reason="error")
