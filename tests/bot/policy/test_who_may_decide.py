"""The bot's decision policy, which the gate asks with the call's requirement under the rule in
force, and the gate's answer the edges ask (``Agent.ask``): every refusal is typed (a rule
name and the words), a decision naming no person is refused where a call needs one, and an
agent's own policy is asked the same way."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, Approve, NotAllowedToDecide, PendingToolCall, Requirement
from agents.decisions import ASKS_WITHOUT_DECIDER
from agents.models import ScriptedModel
from bot._settings import load_settings
from bot.policy import Refusal
from bot.policy._approval_rules import ApprovalRules, agent_rules, call_policy
from bot.policy._usergroups import UserGroups
from storage import InMemoryStorage

ENV = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
POLICY = """
[[rules]]
tools = ["refund"]
approvals = 2

[[rules]]
tools = ["drop-table"]
approvers = ["U7"]
"""


def _call(tool: str, approvals: int = 1, requested_by: str | None = "U1") -> PendingToolCall:
    """A pending call of ``tool`` as the gate hands it to the decision policy: with who may
    approve under the rule the policy file has for it."""
    calls = call_policy(load_settings({**ENV, "POLICY_FILE": str(_FILE)}))
    said = calls.call_rules(tool, tool, ("ops",), {})
    requirement = Requirement(
        approvers=list(said.approvers),
        allow_self_approval=said.allow_self_approval,
        rule_number=said.rule_number,
    )
    return PendingToolCall(
        requirement=requirement,
        tool_call_id="c1",
        tool_name=tool,
        args={},
        requires_approval=True,
        suspend_payload=None,
        resume_schema=None,
        fingerprint="f",
        agent_path=["ops"],
        requested_by=requested_by,
        approvals_required=approvals,
    )


_FILE = Path(tempfile.mkdtemp()) / "countersign.toml"
_FILE.write_text(POLICY, encoding="utf-8")


@pytest.fixture
def rules() -> ApprovalRules:
    settings = load_settings({**ENV, "POLICY_FILE": str(_FILE)})
    agent = Agent(id="ops", model=ScriptedModel([]), storage=InMemoryStorage())
    built = agent_rules(settings, agent, UserGroups(AsyncWebClient(token="xoxb-1")))
    assert built.call_rules("refund", "refund", ("ops",), {}) is not None  # the file's rules
    return built.decision_policy


async def test_the_bots_rules_are_asked_about_decisions_naming_no_person() -> None:
    assert getattr(ApprovalRules, ASKS_WITHOUT_DECIDER) is True


@pytest.mark.parametrize(
    ("tool", "approvals", "kind"),
    [("refund", 2, "approve"), ("drop-table", 1, "approve"), ("drop-table", 1, "decline")],
)
async def test_no_person_is_refused_where_a_call_needs_one(
    rules: ApprovalRules, tool: str, approvals: int, kind: str
) -> None:
    refusal = await rules(_call(tool, approvals), None, kind)  # type: ignore[arg-type]
    assert refusal is not None and refusal.rule == "needs-person"
    assert "API_TOKENS" in refusal.text


@pytest.mark.parametrize(
    ("tool", "approvals", "kind"), [("refund", 2, "decline"), ("x", 1, "approve")]
)
async def test_no_person_may_decide_what_needs_no_one_in_particular(
    rules: ApprovalRules, tool: str, approvals: int, kind: str
) -> None:
    assert await rules(_call(tool, approvals), None, kind) is None  # type: ignore[arg-type]


async def test_people_get_the_rule_that_refused_them_as_data(rules: ApprovalRules) -> None:
    assert await rules(_call("x"), "U1", "approve") == Refusal(
        rule="self-approval",
        text="the requester may not approve their own call (ALLOW_SELF_APPROVAL is off)",
    )
    refused = await rules(_call("drop-table"), "U2", "approve")
    assert refused is not None and refused.rule == "not-approver" and "rule 2" in refused.text
    assert await rules(_call("drop-table"), "U7", "approve") is None
    assert await rules(_call("x"), "U1", "decline") is None  # withdrawing one's own


async def test_the_edges_ask_the_gate_which_asks_an_agents_own_policy_whatever_it_returns(
    rules: ApprovalRules,
) -> None:
    async def verdict(policy: object) -> Refusal | None:
        agent = Agent(
            id="ops",
            model=ScriptedModel([]),
            storage=InMemoryStorage(),
            decision_policy=policy,  # type: ignore[arg-type]
        )
        said = await agent.ask(Approve(), call=_call("x"), run_id="r1", decided_by="U2")
        refused = said.refused
        return Refusal.of(refused) if isinstance(refused, NotAllowedToDecide) else None

    assert await verdict(lambda *_: "only on Tuesdays") == Refusal(
        rule="policy", text="only on Tuesdays"
    )

    def broken(*_: object) -> None:
        raise RuntimeError("boom")

    failed = await verdict(broken)
    assert failed is not None and failed.rule == "policy"  # fail safe
    assert await verdict(rules) is None


def test_a_runtime_refusal_comes_back_by_its_rule_name_never_by_its_text() -> None:
    named = NotAllowedToDecide("r", "c1", decided_by="U1", reason="not-approver: x", rule="x")
    assert Refusal.of(named) == Refusal(rule="policy", text="not-approver: x")
    known = NotAllowedToDecide("r", "c1", decided_by=None, reason="why", rule="needs-person")
    assert Refusal.of(known) == Refusal(rule="needs-person", text="why")
