"""Who may decide: the approval policy file (SPEC 11, ``read_policy``), matching a call against it
(``CallPolicy``), the served agent's decision policy (``bot.policy._approval_rules``: approvers,
user groups, self-approval, no person where one is needed), what a card says about it, and the
per-person API tokens file (``API_TOKENS``). ``Policy`` is the one object the edges ask; every
check answers with a ``Refusal`` (a ``RefusalRule`` and the words), never a sentence to split.

Example:
    >>> file = read_policy(Path("countersign.toml"))  # doctest: +SKIP
    >>> CallPolicy(file, Fallback(approvers=(), allow_self_approval=False))  # doctest: +SKIP
"""

from bot.policy._apply import ArgsThreshold, CallPolicy, Effective, Fallback
from bot.policy._card_rules import CardRules
from bot.policy._file import (
    DEFAULT_POLICY_FILE,
    Defaults,
    GatewayPolicy,
    MCPServerEntry,
    PolicyFile,
    Rule,
    policy_path,
    policy_problems,
    read_policy,
)
from bot.policy._policy import Policy
from bot.policy._refusals import Refusal, RefusalRule
from bot.policy._tokens import PersonToken, TokenFile, sha256_hex, token_file_problems
from bot.policy._values import EscalationStep, Grants

__all__ = [
    "DEFAULT_POLICY_FILE",
    "ArgsThreshold",
    "CallPolicy",
    "CardRules",
    "Defaults",
    "Effective",
    "EscalationStep",
    "Fallback",
    "GatewayPolicy",
    "Grants",
    "MCPServerEntry",
    "PersonToken",
    "Policy",
    "PolicyFile",
    "Refusal",
    "RefusalRule",
    "Rule",
    "TokenFile",
    "policy_path",
    "policy_problems",
    "read_policy",
    "sha256_hex",
    "token_file_problems",
]
