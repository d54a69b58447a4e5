"""SPEC 3.6: approvals and suspensions raised in sub-agents surface at the top."""

import asyncio
import json
import re
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ModelRequest, ScriptedModel, call, calls, reply
from storage import InMemoryStorage
from tests.agents.test_suspend_resume import Ticketing
from tools import ToolContext, create_tool


class RefundInput(BaseModel):
    order: int
    amount: float


class Ledger:
    def __init__(self) -> None:
        self.refunds: list[dict[str, Any]] = []

    async def refund(self, input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        self.refunds.append(input.model_dump())
        return {"refunded": input.order}

    def tool(self) -> Any:
        return create_tool(
            id="refund",
            description="Issue a refund",
            input_schema=RefundInput,
            execute=self.refund,
            require_approval=lambda ctx: ctx.args["amount"] > 100,
        )


def _billing(ledger: Ledger, *script: Any) -> Agent:
    return Agent(
        id="billing",
        description="Handles refunds and invoices",
        model=ScriptedModel(list(script)),
        tools=[ledger.tool()],
    )


async def test_each_sub_agent_is_a_delegation_tool_with_its_description() -> None:
    model = ScriptedModel([reply("hi")])
    ops = Agent(
        id="ops", model=model, agents={"billing": _billing(Ledger())}, storage=InMemoryStorage()
    )
    await ops.generate("hello")
    spec = next(t for t in model.requests[0].tools if t.name == "agent-billing")
    assert spec.description == "Handles refunds and invoices"
    assert spec.parameters["required"] == ["prompt"]


async def test_an_inner_approval_surfaces_with_the_inner_tool_and_the_outer_handle() -> None:
    store = InMemoryStorage()
    ledger = Ledger()
    billing = _billing(
        ledger, call("refund", {"order": 7, "amount": 250}, id="r1"), reply("Refunded order 7.")
    )
    ops_model = ScriptedModel(
        [
            call("agent-billing", {"prompt": "refund order 7 for 250"}, id="d1"),
            reply("Billing refunded it."),
        ]
    )
    ops = Agent(id="ops", model=ops_model, agents={"billing": billing}, storage=store)

    stream = await ops.stream("refund order 7 for 250")
    chunks = [c async for c in stream.full_stream]
    first = await stream.result()
    approval = next(c for c in chunks if c.type == "tool-call-approval")
    assert approval.run_id == first.run_id
    assert approval.payload.tool_call_id == "d1"
    assert approval.payload.tool_name == "refund"
    assert approval.payload.args == {"order": 7, "amount": 250}
    assert approval.payload.agent_path == ["ops", "billing"]
    assert ledger.refunds == []
    assert ops.agents["billing"].storage is store  # sub-agents use the supervisor's storage

    listed = await ops.list_suspended_runs()
    pending = listed.runs[0].tool_calls[0]
    assert (pending.tool_name, pending.args, pending.agent_path) == (
        "refund",
        {"order": 7, "amount": 250},
        ["ops", "billing"],
    )

    done = await ops.approve_tool_call_generate(
        run_id=first.run_id, tool_call_id="d1", decided_by="U1"
    )
    assert ledger.refunds == [{"order": 7, "amount": 250}]
    assert done.text == "Billing refunded it."
    delegated = [m for m in ops_model.requests[-1].messages if m.role == "tool"]
    assert delegated[0].content == "Refunded order 7."


async def test_a_decline_reason_reaches_the_inner_model() -> None:
    ledger = Ledger()
    billing_model = ScriptedModel(
        [call("refund", {"order": 7, "amount": 250}), reply("Not refunded.")]
    )
    billing = Agent(id="billing", model=billing_model, tools=[ledger.tool()])
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 7"}), reply("ok")]),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    first = await ops.generate("refund 7")
    await ops.decline_tool_call_generate(run_id=first.run_id, reason="customer is a fraudster")
    assert ledger.refunds == []
    told = json.loads(billing_model.requests[-1].messages[-1].content or "")
    assert told["reason"] == "customer is a fraudster"


async def test_an_inner_suspension_surfaces_and_resume_travels_down() -> None:
    ticketing = Ticketing()
    helpdesk = Agent(
        id="helpdesk",
        model=ScriptedModel(
            [call("open-ticket", {"title": "printer"}, id="t1"), reply("Ticket opened.")]
        ),
        tools=[ticketing.tool()],
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel(
            [call("agent-helpdesk", {"prompt": "printer ticket"}, id="d1"), reply("Done.")]
        ),
        agents={"helpdesk": helpdesk},
        storage=InMemoryStorage(),
    )
    stream = await ops.stream("open a printer ticket")
    chunks = [c async for c in stream.full_stream]
    first = await stream.result()
    suspended = next(c for c in chunks if c.type == "tool-call-suspended")
    assert suspended.payload.tool_name == "open-ticket"
    assert suspended.payload.agent_path == ["ops", "helpdesk"]
    assert suspended.payload.resume_schema is not None
    assert first.finish_reason == "suspended"
    done = await ops.resume_generate({"priority": "high"}, run_id=first.run_id, tool_call_id="d1")
    assert done.text == "Done."
    assert ticketing.opened == [{"title": "printer", "priority": "high"}]


async def test_three_levels_deep_the_decision_travels_all_the_way_down() -> None:
    ledger = Ledger()
    b = _billing(ledger, call("refund", {"order": 1, "amount": 500}), reply("B done"))
    a = Agent(
        id="finance",
        model=ScriptedModel([call("agent-billing", {"prompt": "refund 1"}), reply("A done")]),
        agents={"billing": b},
    )
    top = Agent(
        id="ops",
        model=ScriptedModel(
            [call("agent-finance", {"prompt": "refund 1"}, id="top1"), reply("Top done")]
        ),
        agents={"finance": a},
        storage=InMemoryStorage(),
    )
    first = await top.generate("refund 1")
    pending = first.pending[0]
    assert (pending.tool_call_id, pending.tool_name, pending.agent_path) == (
        "top1",
        "refund",
        ["ops", "finance", "billing"],
    )
    done = await top.approve_tool_call_generate(run_id=first.run_id, tool_call_id="top1")
    assert done.text == "Top done"
    assert ledger.refunds == [{"order": 1, "amount": 500}]


async def test_parallel_delegations_to_one_sub_agent_are_decided_separately_and_run_once() -> None:
    ledger = Ledger()

    def refund_from_prompt(request: ModelRequest) -> Any:
        if request.messages[-1].role == "tool":
            return reply("billing done")
        order = int(re.findall(r"\d+", request.messages[-1].content or "")[0])
        return call("refund", {"order": order, "amount": 200})

    billing = Agent(
        id="billing", model=ScriptedModel([refund_from_prompt] * 4), tools=[ledger.tool()]
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel(
            [
                calls(
                    call("agent-billing", {"prompt": "refund order 1"}, id="d1"),
                    call("agent-billing", {"prompt": "refund order 2"}, id="d2"),
                ),
                reply("both handled"),
            ]
        ),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    first = await ops.generate("refund 1 and 2")
    assert sorted((p.tool_call_id, p.args["order"]) for p in first.pending) == [
        ("d1", 1),
        ("d2", 2),
    ]
    second = await ops.approve_tool_call_generate(run_id=first.run_id, tool_call_id="d2")
    assert second.finish_reason == "suspended"
    results = await asyncio.gather(
        ops.approve_tool_call(run_id=first.run_id, tool_call_id="d1"),
        ops.approve_tool_call(run_id=first.run_id, tool_call_id="d1"),
        return_exceptions=True,
    )
    assert sum(isinstance(r, Exception) for r in results) == 1
    done = next(r for r in results if not isinstance(r, Exception))
    assert (await done.result()).text == "both handled"  # type: ignore[union-attr]
    assert sorted(r["order"] for r in ledger.refunds) == [1, 2]
