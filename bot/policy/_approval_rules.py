"""Who may decide, checked by the runtime inside every decision (``Agent(decision_policy=…)``).

``ApprovalRules`` is the served agent's decision policy, built from ``APPROVERS`` and
``ALLOW_SELF_APPROVAL``. The runtime calls it with the STORED pending call (its
``requested_by`` was written with the snapshot) after the call is found and before it is
claimed, on every surface: button, modals, thread replies, the HTTP API (as the person its
token identifies, or no person for the service token).
No timing of clicks, and no missing card record, can get around it. Rules, in this order:

1. A requester may always decline (withdraw) their own request, and answer their own call's
   question (resume): nothing runs that they did not ask for.
2. ``self-approval``: with ``ALLOW_SELF_APPROVAL=false`` the requester may not approve (or edit
   and approve) their own request.
3. ``not-approver``: with ``APPROVERS`` set, only those users and members of those user groups
   decide (user groups resolved through Slack, cached; a failed lookup refuses).

Rules 2 and 3 take their values from the policy file's first rule matching the call
(``approvers``, ``allow_self_approval``), else its ``[defaults]``, else the environment. The
approvers a rule's ``escalate`` steps added to the stored call (``escalated_approvers``, SPEC 15)
may approve it too.

A refusal is a ``Refusal`` (``bot.policy._refusals``): the rule's name and why, as data.

The bot's own rules also judge decisions that name no person (an API service token,
``decided_by=None``; ``asks_without_decider``): refused (``needs-person``) for a quorum call's
approval and for a call only named approvers decide, allowed otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents import Agent, CallRulesFn, PendingToolCall
from agents.decisions import PolicyKind
from bot._settings import Settings
from bot.policy._apply import CallPolicy, Fallback
from bot.policy._refusals import (
    NEEDS_PERSON_APPROVERS,
    NEEDS_PERSON_QUORUM,
    NOT_APPROVER,
    NOT_RULE_APPROVER,
    SELF_APPROVAL,
    Refusal,
)
from bot.policy._usergroups import UserGroups


class ApprovalRules:
    """``APPROVERS``, ``ALLOW_SELF_APPROVAL`` and the policy file as the runtime's decision
    policy."""

    asks_without_decider = True
    """Asked about decisions naming no person too (``agents.decisions.ASKS_WITHOUT_DECIDER``)."""

    def __init__(
        self, settings: Settings, groups: UserGroups, policy: CallPolicy | None = None
    ) -> None:
        self._policy = policy or call_policy(settings)
        self._user_groups = groups

    async def __call__(
        self, call: PendingToolCall, decided_by: str | None, kind: PolicyKind
    ) -> Refusal | None:
        """None when ``decided_by`` (None: no person) may ``kind`` the stored ``call``, whose
        ``requirement`` says who may approve under its rule (the gate hands it over as the
        rule in force says it now)."""
        rule = call.requirement
        if decided_by is None:
            return _without_person(call, kind)
        own = call.requested_by is not None and call.requested_by == decided_by
        if own and kind in ("decline", "resume"):
            return None
        if own and not rule.allow_self_approval:
            return Refusal(rule="self-approval", text=SELF_APPROVAL)
        approvers = (*rule.approvers, *call.escalated_approvers) if rule.approvers else ()
        if approvers and not await self._is_approver(decided_by, approvers):
            number = rule.rule_number
            text = NOT_APPROVER if number is None else NOT_RULE_APPROVER.format(rule=number)
            return Refusal(rule="not-approver", text=text)
        return None

    async def approvers_among(self, call: PendingToolCall, people: set[str]) -> set[str] | None:
        """Those of ``people`` the call's rule names as approvers, in person or through a user
        group (with the steps' approvers): the only ones who may approve it. None: its rule
        names none, so anyone may."""
        rule = call.requirement
        if not rule.approvers:
            return None
        approvers = (*rule.approvers, *call.escalated_approvers)
        named = {a for a in approvers if a in people}
        for group in (a for a in approvers if a.startswith("S")):
            named |= people & await self._user_groups.members(group)
        return named

    async def _is_approver(self, user: str, approvers: tuple[str, ...]) -> bool:
        if user in approvers:
            return True
        for group in (a for a in approvers if a.startswith("S")):
            if user in await self._user_groups.members(group):
                return True
        return False


def _without_person(call: PendingToolCall, kind: PolicyKind) -> Refusal | None:
    """A decision by no person: never one of a quorum's approvals, never an approver's."""
    if kind == "approve" and call.approvals_required > 1:
        return Refusal(
            rule="needs-person", text=NEEDS_PERSON_QUORUM.format(needed=call.approvals_required)
        )
    if call.requirement.approvers:
        return Refusal(rule="needs-person", text=NEEDS_PERSON_APPROVERS)
    return None


@dataclass(frozen=True, kw_only=True)
class AgentRules:
    """What the bot gives the agent it serves, built once from the settings (``agent_rules``)."""

    decision_policy: ApprovalRules
    """Who may decide (``Agent(decision_policy=…)``), unless the agent brought its own."""
    call_rules: CallRulesFn
    """What the policy file adds when a call is gated (approval, quorum, TTL)."""
    calls: CallPolicy
    """The policy file matched against calls (what the edges ask: ``bot.policy.Policy``)."""
    groups: UserGroups
    """The user groups the decision policy looks members up in."""
    claim_lease_seconds: float
    """``CLAIM_LEASE_SECONDS``, unless the agent was built with its own lease."""
    approval_ttl_seconds: float
    """``APPROVAL_TTL_SECONDS`` (or the policy file's), unless the agent has its own."""


def agent_rules(settings: Settings, agent: Agent, groups: UserGroups) -> AgentRules:
    """The decision policy and call rules the served ``agent`` needs (user groups looked up
    through ``groups``)."""
    calls = call_policy(settings, agent)
    return AgentRules(
        decision_policy=ApprovalRules(settings, groups, calls),
        call_rules=calls.call_rules,
        calls=calls,
        groups=groups,
        claim_lease_seconds=settings.claim_lease_seconds,
        approval_ttl_seconds=settings.approval_ttl_seconds,
    )


def call_policy(settings: Settings, agent: Agent | None = None) -> CallPolicy:
    """The policy file's rules over ``[defaults]`` and the environment (tool ids looked up in
    ``agent``)."""
    fallback = Fallback(
        approvers=settings.approvers, allow_self_approval=settings.allow_self_approval
    )
    source = Path(settings.policy_file).name if settings.policy_file else None
    return CallPolicy(settings.policy, fallback, agent.tool_for if agent else None, source=source)
