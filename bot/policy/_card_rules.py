"""What a card says about who may decide a call, and whether Approve asks "are you sure?".

``CardRules`` is the small typed value the rules hand to the card (``Policy.card``);
the card never reads settings or the policy itself. ``confirm`` is True for tools an MCP server
marks destructive (``destructiveHint`` not false and ``readOnlyHint`` not true); a policy rule
may ask for it too (SPEC 11 ``confirm = true``) through the same method.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools import Tool
from tools.mcp import MCPTool


@dataclass(frozen=True, kw_only=True)
class CardRules:
    """Who may approve one pending call, as its card shows it."""

    approvers: tuple[str, ...] = ()
    """User (``U…``/``W…``) and user-group (``S…``) ids; empty: anyone in the workspace."""
    allow_self_approval: bool = True
    """False: the requester may not approve their own call (they may still decline it)."""
    approvals_required: int = 1
    """Distinct approvers needed (quorum)."""
    confirm: bool = False
    """Approve opens a confirmation dialog first."""
    escalated_approvers: tuple[str, ...] = ()
    """Who else may approve this call since its rule's ``escalate`` steps added them (SPEC 15);
    empty when no step added anyone, or anyone may approve anyway."""
    escalation_step: int = 0
    """How many escalation steps the call went through (0: none)."""


def is_destructive(tool: Tool | None) -> bool:
    """True for an MCP tool whose annotations do not rule out destruction (MCP's defaults:
    ``destructiveHint`` true, ``readOnlyHint`` false); False for any other tool."""
    if not isinstance(tool, MCPTool):
        return False
    hints = tool.annotations
    return hints.get("readOnlyHint") is not True and hints.get("destructiveHint") is not False
