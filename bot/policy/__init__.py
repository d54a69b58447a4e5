"""Who may decide: the approval policy file (SPEC 11, ``read_policy``), matching a call against it
(``CallPolicy``), the served agent's decision policy (``bot.policy._approval_rules``: approvers,
user groups, self-approval), and what a card says about it (``CardRules``).

Example:
    >>> file = read_policy(Path("countersign.toml"))  # doctest: +SKIP
    >>> CallPolicy(file, Fallback(approvers=(), allow_self_approval=False))  # doctest: +SKIP
"""

from bot.policy._apply import CallPolicy, Effective, Fallback
from bot.policy._file import (
    DEFAULT_POLICY_FILE,
    Defaults,
    MCPServerEntry,
    PolicyFile,
    Rule,
    policy_path,
    policy_problems,
    read_policy,
)
from bot.policy._values import EscalationStep, Grants

__all__ = [
    "DEFAULT_POLICY_FILE",
    "CallPolicy",
    "Defaults",
    "Effective",
    "EscalationStep",
    "Fallback",
    "Grants",
    "MCPServerEntry",
    "PolicyFile",
    "Rule",
    "policy_path",
    "policy_problems",
    "read_policy",
]
