"""``Policy``: what the edges need of the approval policy besides the gate's answer.

Who may decide a call, and what a decision would do, is the gate's one answer
(``Agent.ask``, judged again inside the claim); the edges never check a rule themselves. What
a card shows about who may approve and whether Approve confirms is what the gate stored with
the call (``PendingToolCall.requirement``): ``Policy.card`` only puts it in the card's terms.
What edits would need beyond the rule in force (the Edit modal's warning) is a preview of the
policy file; user groups' memberships are forgotten when Slack says they changed.

Example:
    >>> policy = Policy(decision=rules.decision_policy, calls=rules.calls)  # doctest: +SKIP
    >>> policy.card(call).approvers  # doctest: +SKIP
    ('S0614TZR7',)
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agents import DecisionPolicy, PendingToolCall
from bot.policy._apply import ArgsThreshold, CallPolicy
from bot.policy._card_rules import CardRules
from bot.policy._usergroups import UserGroups


@runtime_checkable
class NamesApprovers(Protocol):
    """A decision policy that lets only the approvers a call's rule names approve it (the
    bot's own ``ApprovalRules``)."""

    async def approvers_among(self, call: PendingToolCall, people: set[str]) -> set[str] | None:
        """Those of ``people`` the call's rule names; None: it names none (anyone may)."""
        ...


class Policy:
    """The approval policy as the edges read it (see the module docstring)."""

    def __init__(
        self, *, decision: DecisionPolicy, calls: CallPolicy, groups: UserGroups | None = None
    ) -> None:
        self.decision = decision
        """The served agent's decision policy, the one the gate asks inside the claim."""
        self._calls = calls
        self._groups = groups

    def membership_changed(self, group: str | None = None) -> None:
        """A user group's members changed (Slack's ``subteam_members_changed``): the next
        decision asks Slack again (None: every group)."""
        if self._groups is not None:
            self._groups.forget(group)

    async def who_may_approve(self, call: PendingToolCall, people: set[str]) -> set[str]:
        """Those of ``people`` the gate may let approve ``call``: its rule's named approvers
        among them (a set lookup, whatever the number of people), or all of them when the rule
        names none or the agent brought its own decision policy. The gate still answers for
        each (``Agent.ask``): this only leaves out who cannot be an approver at all."""
        if isinstance(self.decision, NamesApprovers):
            named = await self.decision.approvers_among(call, people)
            if named is not None:
                return named
        return people

    def stricter_by_args(self, call: PendingToolCall) -> tuple[ArgsThreshold, ...]:
        """What edited arguments of ``call`` above some limits would need beyond its rule now
        (the Edit modal says it before anyone edits; the gate gates the edit itself)."""
        return self._calls.stricter_by_args(call)

    @staticmethod
    def card(call: PendingToolCall) -> CardRules:
        """Who may approve ``call`` and whether Approve asks for confirmation, as the gate
        stored it with the call, for its card."""
        rule = call.requirement
        added = tuple(a for a in call.escalated_approvers if a not in rule.approvers)
        return CardRules(
            approvers=tuple(rule.approvers),
            allow_self_approval=rule.allow_self_approval,
            approvals_required=call.approvals_required,
            confirm=Policy.confirms(call),
            escalated_approvers=added if rule.approvers else (),
            escalation_step=call.escalation_step,
        )

    @staticmethod
    def confirms(call: PendingToolCall) -> bool:
        """Whether Approve asks "are you sure?": the rule says ``confirm = true``, or the tool
        is an MCP tool its server marks destructive."""
        return call.requirement.confirm or call.requirement.destructive
