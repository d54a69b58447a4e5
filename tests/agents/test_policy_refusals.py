"""The decision-policy seam: a refusal may be data (its rule reaches ``NotAllowedToDecide.rule``),
and a policy that says so is asked about decisions naming no person too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from agents import Agent, NotAllowedToDecide, PendingToolCall, PolicyRefusal
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tools import Tool


@dataclass(frozen=True, kw_only=True)
class Refused:
    rule: str
    text: str


def _agent(store: InMemoryStorage, tool: Tool, policy: object) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel([call(tool.id, {"id": "abc"}, id="c1"), reply("ok")]),
        tools=[tool],
        storage=store,
        decision_policy=policy,  # type: ignore[arg-type]
    )


async def test_a_refusal_returned_as_data_reaches_the_error_as_its_rule_and_reason(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    def policy(call: PendingToolCall, decided_by: str | None, kind: str) -> PolicyRefusal | None:
        return Refused(rule="not-approver", text="only U9 decides") if decided_by != "U9" else None

    agent = _agent(store, make_tool(require_approval=True), policy)
    first = await agent.generate("delete")
    with pytest.raises(NotAllowedToDecide) as info:
        await agent.approve_tool_call(run_id=first.run_id, decided_by="U2")
    assert (info.value.rule, info.value.reason) == ("not-approver", "only U9 decides")
    assert info.value.to_dict()["rule"] == "not-approver"
    assert executions.calls == []


async def test_a_sentence_is_the_policy_rule_with_the_sentence_as_reason(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    agent = _agent(store, make_tool(require_approval=True), lambda *_: "nobody today")
    first = await agent.generate("delete")
    with pytest.raises(NotAllowedToDecide) as info:
        await agent.approve_tool_call(run_id=first.run_id, decided_by="U2")
    assert (info.value.rule, info.value.reason) == ("policy", "nobody today")


class NeedsAPerson:
    """Refuses decisions naming no one; asked about them because it says so."""

    asks_without_decider = True

    def __init__(self) -> None:
        self.asked: list[str | None] = []

    def __call__(self, call: PendingToolCall, decided_by: str | None, kind: str) -> Refused | None:
        self.asked.append(decided_by)
        return Refused(rule="needs-person", text="a person decides") if decided_by is None else None


async def test_a_policy_that_asks_without_a_decider_refuses_a_decision_naming_no_one(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    policy = NeedsAPerson()
    agent = _agent(store, make_tool(require_approval=True), policy)
    first = await agent.generate("delete")
    with pytest.raises(NotAllowedToDecide) as info:
        await agent.approve_tool_call(run_id=first.run_id)
    assert (info.value.rule, info.value.decided_by) == ("needs-person", None)
    assert executions.calls == []
    done = await agent.approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
    assert done.finish_reason == "stop" and policy.asked == [None, "U2"]


async def test_a_plain_policy_is_asked_only_when_a_person_is_named(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    asked: list[str | None] = []

    def policy(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        asked.append(decided_by)
        return "never"

    agent = _agent(store, make_tool(require_approval=True), policy)
    first = await agent.generate("delete")
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.finish_reason == "stop" and asked == []
    assert executions.of("delete-record") == [{"id": "abc"}]
