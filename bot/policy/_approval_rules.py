"""Who may decide, checked by the runtime inside every decision (``Agent(decision_policy=…)``).

``ApprovalRules`` is the served agent's decision policy, built from ``APPROVERS`` and
``ALLOW_SELF_APPROVAL``. The runtime calls it with the STORED pending call (its
``requested_by`` was written with the snapshot) after the call is found and before it is
claimed, on every surface: button, modals, thread replies, the HTTP API with ``decidedBy``.
No timing of clicks, and no missing card record, can get around it. Rules, in this order:

1. A requester may always decline (withdraw) their own request, and answer their own call's
   question (resume): nothing runs that they did not ask for.
2. ``self-approval``: with ``ALLOW_SELF_APPROVAL=false`` the requester may not approve (or edit
   and approve) their own request.
3. ``not-approver``: with ``APPROVERS`` set, only those users and members of those user groups
   decide (user groups resolved through Slack, cached; a failed lookup refuses).

Rules 2 and 3 take their values from the policy file's first rule matching the call
(``approvers``, ``allow_self_approval``), else its ``[defaults]``, else the environment.

A refusal is a sentence starting with the rule's name (``"self-approval: …"``);
``rule_of`` reads the name back for the audit log and the ephemeral.
"""

from __future__ import annotations

from typing import Literal

from agents import Agent, PendingToolCall
from agents.decisions import PolicyKind
from bot._settings import Settings
from bot.policy._apply import CallPolicy, Fallback
from bot.policy._card_rules import CardRules, is_destructive
from bot.policy._usergroups import UserGroups
from tools import Tool

Rule = Literal["other-workspace", "self-approval", "not-approver", "policy"]
"""Which rule refused a decision (recorded in the audit log); ``policy``: the agent's own."""

SELF_APPROVAL = (
    "self-approval: the requester may not approve their own call (ALLOW_SELF_APPROVAL is off)"
)
NOT_APPROVER = "not-approver: only the users and user groups in APPROVERS may decide this call"
NOT_RULE_APPROVER = (
    "not-approver: only the approvers of rule {rule} of the policy file may decide this call"
)


def rule_of(sentence: str) -> Rule:
    """The rule a refusal sentence names (``policy`` for one an agent's own policy wrote)."""
    name = sentence.split(":", 1)[0].strip()
    if name in ("self-approval", "not-approver", "other-workspace"):
        return name  # type: ignore[return-value]
    return "policy"


class ApprovalRules:
    """``APPROVERS``, ``ALLOW_SELF_APPROVAL`` and the policy file as the runtime's decision
    policy."""

    def __init__(
        self, settings: Settings, groups: UserGroups, policy: CallPolicy | None = None
    ) -> None:
        self._policy = policy or call_policy(settings)
        self._user_groups = groups

    async def __call__(
        self, call: PendingToolCall, decided_by: str | None, kind: PolicyKind
    ) -> str | None:
        """None when ``decided_by`` may ``kind`` the stored ``call``; else why not."""
        if decided_by is None:
            return None  # the runtime asks only when a person is named
        own = call.requested_by is not None and call.requested_by == decided_by
        if own and kind in ("decline", "resume"):
            return None
        rule = self._policy.for_call(call)
        if own and not rule.allow_self_approval:
            return SELF_APPROVAL
        if rule.approvers and not await self._is_approver(decided_by, rule.approvers):
            return NOT_APPROVER if rule.rule is None else NOT_RULE_APPROVER.format(rule=rule.rule)
        return None

    def for_card(self, call: PendingToolCall, tool: Tool | None) -> CardRules:
        """Who may approve ``call`` and whether Approve asks for confirmation, for its card:
        the matching policy rule (or the defaults), and destructive MCP tools always confirm."""
        rule = self._policy.for_call(call)
        return CardRules(
            approvers=rule.approvers,
            allow_self_approval=rule.allow_self_approval,
            approvals_required=call.approvals_required,
            confirm=rule.confirm or is_destructive(tool),
        )

    async def _is_approver(self, user: str, approvers: tuple[str, ...]) -> bool:
        if user in approvers:
            return True
        for group in (a for a in approvers if a.startswith("S")):
            if user in await self._user_groups.members(group):
                return True
        return False


def call_policy(settings: Settings, agent: Agent | None = None) -> CallPolicy:
    """The policy file's rules over ``[defaults]`` and the environment (tool ids looked up in
    ``agent``)."""
    fallback = Fallback(
        approvers=settings.approvers, allow_self_approval=settings.allow_self_approval
    )
    return CallPolicy(settings.policy, fallback, agent.tool_for if agent else None)
