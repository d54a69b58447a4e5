"""Applying the policy file to calls: which rule matches, and what it asks of the runtime.

One ``CallPolicy`` per served agent. The runtime asks it twice per call, with the same
answer both times (a rule depends only on the call's tool, agent path and arguments, all
stored with the call):

- when the call is proposed (``call_rules``: may ADD approval, a quorum, a TTL; never remove),
  and the gate stores the answer with the call (its ``requirement``);
- inside every decision, for who may approve under the rule in force (``call_rules`` again:
  the gate refreshes the call's approvers, and the bot's decision policy reads them).

Example:
    >>> policy = CallPolicy(PolicyFile(rules=(Rule(tools=("refund",), approvals=2),)),
    ...                     Fallback(approvers=(), allow_self_approval=False))
    >>> policy.match("refund", "refund", ("ops", "billing"), {}).approvals
    2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from agents import CallRules, Escalation, GrantLimits, PendingToolCall
from bot.policy._file import PolicyFile, Rule
from bot.policy._match import CompiledRules
from bot.policy._values import EscalationStep, Grants
from bot.policy._words import rule_key, rule_text
from tools import Tool


@dataclass(frozen=True, kw_only=True)
class Fallback:
    """What applies where no rule says otherwise (``[defaults]`` over the environment)."""

    approvers: tuple[str, ...]
    """User and user-group ids; empty: anyone."""
    allow_self_approval: bool
    """Whether a requester may approve their own call."""


@dataclass(frozen=True, kw_only=True)
class Effective:
    """What applies to one call: its rule's fields, the fallback for the rest."""

    rule: int | None
    """The matching rule's number (1-based, as in the file); None: no rule matched."""
    approvers: tuple[str, ...]
    """Who may approve (users and user groups); empty: anyone."""
    allow_self_approval: bool
    """Whether the requester may approve their own call."""
    require_approval: bool = False
    """The rule adds approval."""
    approvals: int | None = None
    """The rule's quorum."""
    ttl_seconds: float | None = None
    """The rule's TTL."""
    max_ttl_seconds: float | None = None
    """The longest Extend may keep the rule's calls decidable (None: they cannot be)."""
    confirm: bool = False
    """Approve asks for confirmation."""
    grants: Grants | None = None
    """The standing grants the rule allows (``max_seconds``, ``max_uses``); None: none."""
    escalate: tuple[EscalationStep, ...] = ()
    """The rule's escalation steps, in increasing ``after``, each before the call's TTL."""


@dataclass(frozen=True, kw_only=True)
class ArgsThreshold:
    """A rule that arguments above some limits would bring in, asking more than a call's
    rule does now (what an Edit modal warns about before anyone edits)."""

    rule: int
    """The rule's number (1-based, as in the file)."""
    args_above: dict[str, int | float]
    """The arguments and the limits above which the rule applies."""
    approvals: int
    """Distinct approvers the rule needs."""
    confirm: bool
    """Whether the rule asks for a confirmation."""


class CallPolicy:
    """The rules of a policy file, matched first-wins against calls."""

    def __init__(
        self,
        file: PolicyFile,
        fallback: Fallback,
        tool_of: Callable[[PendingToolCall], Tool | None] | None = None,
        source: str | None = None,
    ) -> None:
        self._fallback = fallback
        self._tool_of = tool_of or (lambda _call: None)
        self._rules = file.rules
        self._compiled = CompiledRules(file.rules)  # once: matching never compiles a glob
        self._effective: dict[int, Effective] = {}  # by rule index, made on first match
        self._none = Effective(
            rule=None,
            approvers=fallback.approvers,
            allow_self_approval=fallback.allow_self_approval,
        )
        self._source = source
        self._said: dict[int | None, CallRules] = {}  # by rule number, made on first match

    def match(
        self, tool_name: str, tool_id: str, agent_path: Sequence[str], args: dict[str, Any]
    ) -> Effective:
        """The first rule matching the call, over the fallback."""
        index = self._compiled.first(tool_name, tool_id, "/".join(agent_path), args)
        if index is None:
            return self._none
        found = self._effective.get(index)
        if found is None:
            found = self._effective[index] = self._effective_of(index + 1, self._rules[index])
        return found

    def for_call(self, call: PendingToolCall) -> Effective:
        """``match`` for a stored pending call (the inner tool, for sub-agents)."""
        tool = self._tool_of(call)
        tool_id = tool.id if tool is not None else call.tool_name
        return self.match(call.tool_name, tool_id, call.agent_path, dict(call.args))

    def stricter_by_args(self, call: PendingToolCall) -> tuple[ArgsThreshold, ...]:
        """The ``args_above`` rules for ``call``'s tool and agents that ask more than its rule
        does now (more approvers, or a confirm it lacks): what edited arguments above their
        limits would need. In file order."""
        now = self.for_call(call)
        tool = self._tool_of(call)
        names = {call.tool_name, tool.id if tool is not None else call.tool_name}
        path = "/".join(call.agent_path)
        found = []
        for index, rule in enumerate(self._rules):
            if not rule.args_above or index + 1 == now.rule:
                continue
            if not any(fnmatchcase(n, g) for n in names for g in rule.tools):
                continue
            if rule.agents is not None and not any(fnmatchcase(path, g) for g in rule.agents):
                continue
            effective = self._effective_of(index + 1, rule)
            needed = effective.approvals or 1
            if needed > max(now.approvals or 1, call.approvals_required) or (
                effective.confirm and not now.confirm
            ):
                found.append(
                    ArgsThreshold(
                        rule=index + 1,
                        args_above=dict(rule.args_above),
                        approvals=needed,
                        confirm=effective.confirm,
                    )
                )
        return tuple(found)

    def call_rules(
        self, tool_name: str, tool_id: str, agent_path: tuple[str, ...], args: dict[str, Any]
    ) -> CallRules:
        """The runtime's ``call_rules``: what the matching rule says (over ``[defaults]`` and
        the environment; ``rule`` None when none matches): the gate stores it with the call,
        and the decision policy reads who may approve from it."""
        effective = self.match(tool_name, tool_id, agent_path, args)
        found = self._said.get(effective.rule)
        if found is None:
            found = self._said[effective.rule] = self._rules_of(effective)
        return found

    def _rules_of(self, effective: Effective) -> CallRules:
        number = effective.rule
        grants = effective.grants
        if number is None:
            return CallRules(
                matched=False,
                approvers=effective.approvers,
                allow_self_approval=effective.allow_self_approval,
            )
        rule = self._rules[number - 1]
        return CallRules(
            require_approval=effective.require_approval,
            approvals=effective.approvals,
            ttl_seconds=effective.ttl_seconds,
            max_ttl_seconds=effective.max_ttl_seconds,
            confirm=effective.confirm,
            grants=None
            if grants is None
            else GrantLimits(max_seconds=grants.max_seconds, max_uses=grants.max_uses),
            rule=rule_key(number, rule),
            rule_number=number,
            rule_source=self._source,
            rule_text=rule_text(rule),
            approvers=effective.approvers,
            allow_self_approval=effective.allow_self_approval,
            escalate=tuple(
                Escalation(
                    after_seconds=step.after.total_seconds(),
                    approvers=list(step.approvers),
                    notify=list(step.notify),
                )
                for step in effective.escalate
            ),
            free_args=() if grants is None else grants.free_args,
        )

    def _effective_of(self, number: int, rule: Rule) -> Effective:
        fallback = self._fallback
        return Effective(
            rule=number,
            approvers=fallback.approvers if rule.approvers is None else rule.approvers,
            allow_self_approval=(
                fallback.allow_self_approval
                if rule.allow_self_approval is None
                else rule.allow_self_approval
            ),
            require_approval=rule.require_approval,
            approvals=rule.approvals,
            ttl_seconds=None if rule.ttl_seconds is None else float(rule.ttl_seconds),
            max_ttl_seconds=None if rule.max_ttl_seconds is None else float(rule.max_ttl_seconds),
            confirm=rule.confirm,
            grants=rule.grants,
            escalate=rule.escalate,
        )
