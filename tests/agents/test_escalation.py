"""SPEC 15 in the runtime: ``escalate_tool_call`` records a step of a pending approval once (on
every backend), hands the call out with its ``escalated_approvers``, shows them to the decision
policy inside the decision, audits the step, tells the observers, and never calls the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, CallEscalated, Observer, PendingToolCall, ServedParts
from agents.errors import NotAllowedToDecide
from agents.models import ScriptedModel, call, reply
from storage import Storage, utcnow
from tests.agents.conftest import Executions
from tests.backends import storage, storage_url  # noqa: F401  (fixtures)
from tools import Tool


def leads_or_u2(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
    """U2 decides; whoever an escalation step added may approve too."""
    if decided_by == "U2" or decided_by in call.escalated_approvers:
        return None
    return "only U2 (and whoever an escalation step added) may decide"


async def test_a_step_is_recorded_once_and_lets_its_approvers_approve_that_call(
    storage: Storage,  # noqa: F811
    make_tool: Callable[..., Tool],
    executions: Executions,
) -> None:
    seen: list[CallEscalated] = []
    model = ScriptedModel([call("delete-record", {"id": "7"}, id="c1"), reply("Deleted 7.")])
    agent = Agent(
        id="ops",
        model=model,
        tools=[make_tool(require_approval=True)],
        storage=storage,
        decision_policy=leads_or_u2,
    ).served(ServedParts(observers=(Observer(on_escalation=seen.append),)))
    first = await agent.generate("delete 7", requested_by="U1")
    step: dict[str, Any] = {"run_id": first.run_id, "tool_call_id": "c1", "at": utcnow()}
    asked = len(model.requests)

    with pytest.raises(NotAllowedToDecide):  # before any step added them
        await agent.approve_tool_call(run_id=first.run_id, decided_by="U7")
    assert await agent.escalate_tool_call(step=2, approvers=["U7"], **step) is None  # no step 1
    one = await agent.escalate_tool_call(step=1, notify=["S0ONCALL"], **step)
    assert one is not None and (one.escalation_step, one.escalated_approvers) == (1, [])
    two = await agent.escalate_tool_call(step=2, approvers=["U7"], notify=["U7"], **step)
    assert two is not None and (two.escalation_step, two.escalated_approvers) == (2, ["U7"])
    assert await agent.escalate_tool_call(step=2, approvers=["U7"], **step) is None  # again
    assert await agent.pending_call(run_id=first.run_id, tool_call_id="c1") == two
    assert len(model.requests) == asked  # the model was not called
    assert [(e.step, e.tool_name) for e in seen] == [(1, "delete-record"), (2, "delete-record")]

    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U7")
    assert done.text == "Deleted 7." and executions.of("delete-record") == [{"id": "7"}]
    assert await agent.escalate_tool_call(step=3, approvers=["U8"], **step) is None  # decided
    audited = [e for e in await storage.query_audit(run_id=first.run_id) if e.kind == "escalated"]
    assert [(e.data["step"], e.data["approvers"], e.source) for e in audited] == [
        (1, [], "escalation"),
        (2, ["U7"], "escalation"),
    ]
