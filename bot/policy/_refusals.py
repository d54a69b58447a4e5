"""A refusal is data: which rule refused (``RefusalRule``) and the words that say why.

Every check of who may decide answers with a ``Refusal`` or None: the served agent's decision
policy (``ApprovalRules``, inside the claim) and the Slack edge's workspace check; the API's
token check raises ``NotAllowedToDecide`` with rule ``other-person`` (``bot.api._identity``).
The runtime carries the rule's name as ``NotAllowedToDecide.rule`` (a ``Refusal`` is an
``agents.PolicyRefusal``); ``Refusal.of`` turns it back into this value, reading the name,
never the text.

Example:
    >>> Refusal(rule="self-approval", text=SELF_APPROVAL).rule
    'self-approval'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast, get_args

from agents.errors import NotAllowedToDecide

RefusalRule = Literal[
    "self-approval", "not-approver", "needs-person", "other-person", "other-workspace", "policy"
]
"""Which rule refused a decision (recorded in the audit log, shown on cards):

- ``self-approval``: the requester may not approve their own call;
- ``not-approver``: only the approvers (users, user groups) of the call's rule decide it;
- ``needs-person``: no person decides (an API service token) where the call needs one: a
  quorum's approval, or a call only named approvers decide;
- ``other-person``: a per-person API token sent someone else's ``decidedBy``;
- ``other-workspace``: the clicking user belongs to another Slack workspace;
- ``policy``: an agent's own decision policy, which answered with a sentence.
"""

RULES: frozenset[str] = frozenset(get_args(RefusalRule))
"""Every ``RefusalRule``."""

SELF_APPROVAL = "the requester may not approve their own call (ALLOW_SELF_APPROVAL is off)"
NOT_APPROVER = "only the users and user groups in APPROVERS may decide this call"
NOT_RULE_APPROVER = "only the approvers of rule {rule} of the policy file may decide this call"
NEEDS_PERSON_QUORUM = (
    "this call needs {needed} different people to approve it, and this decision names no person "
    "(the API's service token, API_TOKEN, is no one): approve with a per-person token "
    "(API_TOKENS)"
)
NEEDS_PERSON_APPROVERS = (
    "only named approvers may decide this call, and this decision names no person (the API's "
    "service token, API_TOKEN, is no one): decide with a per-person token (API_TOKENS)"
)


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """Why someone (or no one) may not decide a call."""

    rule: RefusalRule
    """The rule that refused."""
    text: str
    """Why, in words (the runtime's ``NotAllowedToDecide.reason``; the API's message)."""

    @classmethod
    def of(cls, error: NotAllowedToDecide) -> Refusal:
        """The refusal a runtime error carries (``policy`` for a rule name we do not know)."""
        return cls(rule=rule_named(error.rule), text=error.reason)


def rule_named(name: str) -> RefusalRule:
    """``name`` as a ``RefusalRule`` (``policy`` for a name no rule of ours has)."""
    return cast(RefusalRule, name) if name in RULES else "policy"
