"""SPEC 3.2: any of four sources gates a call; the verdict is stored with the call."""

from collections.abc import Callable
from typing import Any

import pytest

from agents import Agent, ApprovalContext
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions, RefundInput
from tools import Tool


async def _first_turn(agent: Agent, **options: Any) -> Any:
    return await agent.generate("go", **options)


def _agent(store: InMemoryStorage, tool: Tool, args: dict[str, Any]) -> Agent:
    return Agent(
        id="a",
        model=ScriptedModel([call(tool.id, args, id="c1"), reply("done")]),
        tools=[tool],
        storage=store,
    )


async def test_tool_flag_gates_the_call(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    result = await _first_turn(_agent(store, make_tool(require_approval=True), {"id": "1"}))
    assert result.finish_reason == "suspended"
    assert result.pending[0].requires_approval is True
    assert executions.calls == []


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize(("amount", "gated"), [(50, False), (250, True)])
async def test_tool_predicate_gates_by_arguments(
    store: InMemoryStorage,
    make_tool: Callable[..., Tool],
    is_async: bool,
    amount: int,
    gated: bool,
) -> None:
    seen: list[ApprovalContext] = []

    def over_100(ctx: ApprovalContext) -> bool:
        seen.append(ctx)
        return bool(ctx.args["amount"] > 100)

    async def over_100_async(ctx: ApprovalContext) -> bool:
        return over_100(ctx)

    tool = make_tool(
        "refund",
        input_schema=RefundInput,
        require_approval=over_100_async if is_async else over_100,
    )
    result = await _first_turn(
        _agent(store, tool, {"order": 7, "amount": amount}), request_context={"user": "U1"}
    )
    assert (result.finish_reason == "suspended") is gated
    assert seen[0].tool_name == "refund"
    assert seen[0].args == {"order": 7, "amount": amount}
    assert seen[0].request_context == {"user": "U1"}


async def test_call_option_flag_gates_every_call(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    result = await _first_turn(_agent(store, make_tool(), {"id": "1"}), require_tool_approval=True)
    assert result.finish_reason == "suspended"


async def test_call_option_predicate_gates_matching_calls(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    async def only_prod(ctx: ApprovalContext) -> bool:
        return ctx.args["id"].startswith("prod-")

    gated = await _first_turn(
        _agent(store, make_tool(), {"id": "prod-1"}), require_tool_approval=only_prod
    )
    free = await _first_turn(
        _agent(store, make_tool(), {"id": "dev-1"}), require_tool_approval=only_prod
    )
    assert gated.finish_reason == "suspended"
    assert free.finish_reason == "stop"


async def test_a_predicate_that_raises_means_approval_required(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    def broken(ctx: ApprovalContext) -> bool:
        raise RuntimeError("policy service down")

    result = await _first_turn(_agent(store, make_tool(require_approval=broken), {"id": "1"}))
    assert result.finish_reason == "suspended"
    assert executions.calls == []


async def test_the_gate_verdict_is_stored_and_never_re_decided_on_resume(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    verdicts = iter([True, False])
    tool = make_tool(require_approval=lambda ctx: next(verdicts))
    agent = _agent(store, tool, {"id": "1"})
    result = await _first_turn(agent)
    snapshot = await store.load_snapshot(result.run_id)
    assert snapshot is not None
    assert snapshot.data["pending"][0]["kind"] == "approval"
    done = await agent.approve_tool_call_generate(run_id=result.run_id)
    assert done.text == "done"
    assert executions.of("delete-record") == [{"id": "1"}]
    assert next(verdicts, None) is False  # the predicate ran once, at gating time only
