"""``ServedParts(call_rules=fn)``: a host's rules add approval, a quorum or a TTL to a
call when it is gated, for the agent and its sub-agents; they never remove a tool's own gate."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents import Agent, CallRules, ServedParts
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.test_supervisors import Ledger, _billing


class Seen:
    """A ``call_rules`` fn that records what it is asked and answers ``rules``."""

    def __init__(self, rules: CallRules | None) -> None:
        self.rules = rules
        self.asked: list[tuple[str, str, tuple[str, ...], dict[str, Any]]] = []

    def __call__(
        self, tool_name: str, tool_id: str, agent_path: tuple[str, ...], args: dict[str, Any]
    ) -> CallRules | None:
        self.asked.append((tool_name, tool_id, agent_path, args))
        return self.rules


def _ops(ledger: Ledger, *billing_script: Any) -> Agent:
    ops_model = ScriptedModel(
        [call("agent-billing", {"prompt": "refund order 7"}, id="d1"), reply("Done.")]
    )
    billing = _billing(ledger, *billing_script)
    return Agent(id="ops", model=ops_model, agents={"billing": billing}, storage=InMemoryStorage())


async def test_a_rule_adds_approval_a_quorum_and_a_ttl_to_an_inner_tool_with_none() -> None:
    ledger = Ledger()
    ops = _ops(ledger, call("refund", {"order": 7, "amount": 5}, id="r1"), reply("Refunded."))
    rules = Seen(CallRules(require_approval=True, approvals=2, ttl_seconds=60))
    ops = ops.served(
        ServedParts(call_rules=lambda n, i, p, a: rules(n, i, p, a) if n == "refund" else None)
    )

    result = await ops.generate("refund order 7 for 5")

    assert result.finish_reason == "suspended"
    assert ledger.refunds == []
    pending = result.pending[0]
    assert (pending.tool_name, pending.approvals_required) == ("refund", 2)
    assert pending.expires_at is not None
    assert (
        abs(pending.expires_at - pending.suspended_at - timedelta(seconds=60)).total_seconds() < 5
    )
    assert rules.asked == [("refund", "refund", ("ops", "billing"), {"order": 7, "amount": 5})]
    first = await ops.approve_tool_call_generate(run_id=result.run_id, decided_by="U1")
    assert first.finish_reason == "suspended" and ledger.refunds == []
    done = await ops.approve_tool_call_generate(run_id=result.run_id, decided_by="U2")
    assert done.text == "Done." and len(ledger.refunds) == 1


async def test_rules_saying_no_approval_never_remove_a_tools_own_gate_or_quorum() -> None:
    ledger = Ledger()
    ops = _ops(ledger, call("refund", {"order": 7, "amount": 500}, id="r1"), reply("Refunded."))
    ops = ops.served(ServedParts(call_rules=Seen(CallRules(require_approval=False, approvals=1))))

    result = await ops.generate("refund order 7 for 500")

    assert result.finish_reason == "suspended"  # the tool's own predicate still gates it
    assert result.pending[0].approvals_required == 1
    assert ledger.refunds == []


async def test_a_sub_agents_own_approval_rule_survives_a_permissive_host_rule() -> None:
    ledger = Ledger()
    billing = Agent(
        id="billing",
        model=ScriptedModel([call("refund", {"order": 1, "amount": 1}, id="r1"), reply("ok")]),
        tools=[ledger.tool()],
        default_options={"require_tool_approval": True},
    )
    ops = Agent(
        id="ops",
        model=ScriptedModel([call("agent-billing", {"prompt": "p"}, id="d1"), reply("x")]),
        agents={"billing": billing},
        storage=InMemoryStorage(),
    )
    ops = ops.served(ServedParts(call_rules=Seen(None)))

    result = await ops.generate("refund")

    assert result.finish_reason == "suspended" and ledger.refunds == []


async def test_rules_that_raise_require_approval() -> None:
    ledger = Ledger()
    ops = _ops(ledger, call("refund", {"order": 7, "amount": 5}, id="r1"), reply("Refunded."))

    def broken(*_: Any) -> CallRules:
        raise RuntimeError("policy unavailable")

    ops = ops.served(ServedParts(call_rules=broken))
    result = await ops.generate("refund order 7 for 5")

    assert result.finish_reason == "suspended" and ledger.refunds == []


async def test_without_rules_an_ungated_call_runs_and_the_delegation_is_asked_by_its_name() -> None:
    ledger = Ledger()
    ops = _ops(ledger, call("refund", {"order": 7, "amount": 5}, id="r1"), reply("Refunded."))
    rules = Seen(None)
    ops = ops.served(ServedParts(call_rules=rules))

    result = await ops.generate("refund order 7 for 5")

    assert result.text == "Done." and len(ledger.refunds) == 1
    assert [(n, i, p) for n, i, p, _ in rules.asked] == [
        ("agent-billing", "agent-billing", ("ops",)),
        ("refund", "refund", ("ops", "billing")),
    ]
