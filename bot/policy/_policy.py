"""``Policy``: the one object the edges ask about who may decide a call and what its card says.

The runtime checks who may decide inside every claim, with the served agent's decision policy
(the bot's ``ApprovalRules``, or the agent's own). The edges ask the same policy, through this
object, only to answer early (a modal not worth opening, the Home tab's "waiting for you"),
and ask it what a card shows (who may approve, whether Approve confirms). Nothing at an edge
reads settings or the policy file itself.

Example:
    >>> policy = Policy(decision=rules.decision_policy, calls=rules.calls)  # doctest: +SKIP
    >>> await policy.refusal(call, "U2", "approve")  # doctest: +SKIP
    Refusal(rule='not-approver', text='only the users and user groups in APPROVERS may …')
"""

from __future__ import annotations

from agents import DecisionPolicy, PendingToolCall
from agents.decisions import PolicyKind, ask_policy
from bot.policy._apply import ArgsThreshold, CallPolicy, Effective
from bot.policy._card_rules import CardRules, is_destructive
from bot.policy._refusals import Refusal, rule_named
from bot.policy._usergroups import UserGroups
from tools import Tool


class Policy:
    """Who may decide, as the edges ask it (see the module docstring)."""

    def __init__(
        self, *, decision: DecisionPolicy, calls: CallPolicy, groups: UserGroups | None = None
    ) -> None:
        self.decision = decision
        """The served agent's decision policy, the one the runtime checks inside the claim."""
        self._calls = calls
        self._groups = groups

    async def refusal(
        self, call: PendingToolCall, decided_by: str | None, kind: PolicyKind
    ) -> Refusal | None:
        """None when ``decided_by`` may ``kind`` the stored ``call`` now, asked as the runtime
        asks it (``agents.decisions.ask_policy``: a policy that raises refuses)."""
        refused = await ask_policy(self.decision, call, decided_by, kind)
        return None if refused is None else Refusal(rule=rule_named(refused[0]), text=refused[1])

    def membership_changed(self, group: str | None = None) -> None:
        """A user group's members changed (Slack's ``subteam_members_changed``): the next
        decision asks Slack again (None: every group)."""
        if self._groups is not None:
            self._groups.forget(group)

    def rule_for(self, call: PendingToolCall) -> Effective:
        """The policy file's rule for ``call`` (over ``[defaults]`` and the environment)."""
        return self._calls.for_call(call)

    def stricter_by_args(self, call: PendingToolCall) -> tuple[ArgsThreshold, ...]:
        """What edited arguments of ``call`` above some limits would need beyond its rule now
        (the Edit modal says it before anyone edits; the runtime gates the edit itself)."""
        return self._calls.stricter_by_args(call)

    def card(self, call: PendingToolCall, tool: Tool | None) -> CardRules:
        """Who may approve ``call`` and whether Approve asks for confirmation, for its card."""
        rule = self._calls.for_call(call)
        added = tuple(a for a in call.escalated_approvers if a not in rule.approvers)
        return CardRules(
            approvers=rule.approvers,
            allow_self_approval=rule.allow_self_approval,
            approvals_required=call.approvals_required,
            confirm=self.confirms(call, tool),
            escalated_approvers=added if rule.approvers else (),
            escalation_step=call.escalation_step,
        )

    def confirms(self, call: PendingToolCall, tool: Tool | None = None) -> bool:
        """Whether Approve asks "are you sure?": the rule says ``confirm = true``, or the tool
        is an MCP tool its server marks destructive."""
        return self._calls.for_call(call).confirm or is_destructive(tool)
