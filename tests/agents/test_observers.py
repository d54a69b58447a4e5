"""``Observer``: the runtime reports decisions and tool executions (facts, never values)."""

from collections.abc import Callable
from typing import Any

from agents import Agent, DecisionTaken, Hooks, Observer, ServedParts, ToolExecuted
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.test_supervisors import Ledger, _billing
from tools import Tool


class Seen:
    def __init__(self) -> None:
        self.decisions: list[DecisionTaken] = []
        self.tools: list[ToolExecuted] = []

    def observer(self) -> Observer:
        return Observer(on_decision=self.decisions.append, on_tool_executed=self.tools.append)


async def test_an_approved_call_reports_its_decision_and_its_execution(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    seen = Seen()
    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}, id="c1"), reply("ok")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )
    agent = agent.served(ServedParts(observers=(seen.observer(),)))
    first = await agent.generate("x")
    assert seen.decisions == [] and seen.tools == []
    await agent.approve_tool_call_generate(run_id=first.run_id, source="button")

    [decision] = seen.decisions
    assert (decision.decision, decision.source, decision.tool_name) == (
        "approved",
        "button",
        "delete-record",
    )
    assert (decision.run_id, decision.tool_call_id) == (first.run_id, "c1")
    assert decision.waited_seconds >= 0
    [executed] = seen.tools
    assert (executed.tool_name, executed.outcome, executed.tool_call_id) == (
        "delete-record",
        "ok",
        "c1",
    )
    assert executed.seconds >= 0


async def test_a_decline_is_reported_and_nothing_executes(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    seen = Seen()
    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}), reply("ok")]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )
    agent = agent.served(ServedParts(observers=(seen.observer(),)))
    first = await agent.generate("x")
    await agent.decline_tool_call_generate(run_id=first.run_id)
    assert [(d.decision, d.source) for d in seen.decisions] == [("declined", "python")]
    assert seen.tools == []


async def test_a_failing_tool_and_a_skipped_tool_report_their_outcome(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    seen = Seen()

    def skip_two(info: Any) -> Any:
        return {"proceed": False, "output": "no"} if info.input.get("id") == "2" else None

    agent = Agent(
        id="a",
        model=ScriptedModel(
            [
                call("delete-record", {"id": "1"}, id="c1"),
                call("delete-record", {"id": "2"}, id="c2"),
                call("delete-record", {"nope": 1}, id="c3"),
                reply("ok"),
            ]
        ),
        tools=[make_tool()],
        storage=store,
        hooks=Hooks(before_tool_call=skip_two),
    )
    agent = agent.served(ServedParts(observers=(seen.observer(),)))
    await agent.generate("x")
    outcomes = {t.tool_call_id: t.outcome for t in seen.tools}
    assert outcomes["c1"] == "ok" and outcomes["c2"] == "skipped"
    assert outcomes.get("c3", "error") == "error"


async def test_an_observer_that_raises_never_breaks_the_run(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    def broken(event: Any) -> None:
        raise RuntimeError("metrics backend down")

    agent = Agent(
        id="a",
        model=ScriptedModel([call("delete-record", {"id": "1"}), reply("done")]),
        tools=[make_tool()],
        storage=store,
    )
    agent = agent.served(ServedParts(observers=(Observer(on_tool_executed=broken),)))
    result = await agent.generate("x")
    assert result.text == "done"


async def test_a_sub_agent_reports_to_its_supervisors_observers_once_per_decision() -> None:
    seen = Seen()
    ledger = Ledger()
    billing = _billing(
        ledger, call("refund", {"order": 7, "amount": 250}, id="r1"), reply("Refunded.")
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel(
            [call("agent-billing", {"prompt": "refund 7"}, id="d1"), reply("Done.")]
        ),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    ops = ops.served(ServedParts(observers=(seen.observer(),)))
    first = await ops.generate("refund order 7")
    await ops.approve_tool_call_generate(run_id=first.run_id, tool_call_id="d1", decided_by="U1")
    assert [(d.agent_id, d.tool_name, d.decision) for d in seen.decisions] == [
        ("ops", "refund", "approved")
    ]
    assert [(t.agent_id, t.tool_name, t.outcome) for t in seen.tools] == [
        ("billing", "refund", "ok")
    ]
