"""Gate: who may decide (SPEC 3.3), asked of the agent's decision policy about the call as it
stands under the rule in force (``Case.call``), and again at a quorum's claim for every
approval counted (``still_allowed``: authority at decision time).

- The requester may always withdraw their own call (``Decline(withdrawn=True)``), and nobody
  else may: every policy allows it, no policy is asked.
- Anything else is asked of ``Agent(decision_policy=…)`` when the decision names a person, and
  also when it names none if the policy asks about those (``asks_without_decider``). A policy
  that raises refuses (fail safe). Without a policy anyone may decide.
- ``Expire`` is the system's: nobody is asked.
"""

from __future__ import annotations

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.decisions import ASKS_WITHOUT_DECIDER, PolicyKind, ask_policy
from agents.errors import NOT_REQUESTER_RULE, NotAllowedToDecide
from agents.gate._judgement import Case

WITHDRAW_ONLY_REQUESTER = "only the person who asked for this call may withdraw it"


async def may_decide(case: Case) -> Case:
    """Refuse ``case.decided_by`` when they may not take the decision."""
    decision = case.decision
    if decision.kind == "expire":
        return case
    if decision.kind == "decline" and decision.withdrawn:
        requester = case.pending.requested_by
        if case.decided_by is None or requester is None or case.decided_by != requester:
            raise _refused(case, WITHDRAW_ONLY_REQUESTER, NOT_REQUESTER_RULE)
        return case
    refusal = await refusal_of(case.rt, case.call(), case.decided_by, decision.kind)
    if refusal is not None:
        raise _refused(case, refusal[1], refusal[0])
    return case


async def refusal_of(
    rt: Runtime, call: PendingToolCall, person: str | None, kind: PolicyKind
) -> tuple[str, str] | None:
    """The decision policy's refusal of ``person`` taking ``kind`` on ``call`` (rule, why);
    None: allowed (or nobody to ask)."""
    policy = rt.decision_policy
    if policy is None:
        return None
    if person is None and getattr(policy, ASKS_WITHOUT_DECIDER, False) is not True:
        return None
    return await ask_policy(policy, call, person, kind)


async def still_allowed(case: Case, approvers: list[str]) -> dict[str, str]:
    """The approvers of ``approvers`` (but the decider, just asked) the policy in force no
    longer lets approve the call: by approver, the refusing rule."""
    call = case.call(approvers)
    refused: dict[str, str] = {}
    for approver in approvers:
        if approver == case.decided_by:
            continue
        verdict = await refusal_of(case.rt, call, approver, "approve")
        if verdict is not None:
            refused[approver] = verdict[0]
    return refused


def _refused(case: Case, reason: str, rule: str) -> NotAllowedToDecide:
    return NotAllowedToDecide(
        case.state.run_id,
        case.pending.tool_call_id,
        decided_by=case.decided_by,
        reason=reason,
        rule=rule,
    )
