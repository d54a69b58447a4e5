"""What a card shows about a pending call, from the call (as its approval chunk or
``Agent.pending_call`` hands it out), its tool and the rules: the tool's title and MCP server,
whether it is destructive, who may approve, quorum, expiry, why it waits and under which rule,
and who changed what when it is an edited proposal."""

from __future__ import annotations

from dataclasses import replace

from agents import PendingToolCall
from bot.slack._services import Services
from bot.slack.blocks._card import CardView
from bot.slack.blocks._why import Why
from tools.mcp import MCPTool


def described(services: Services, view: CardView, call: PendingToolCall | None) -> CardView:
    """``view`` with what ``call`` and its tool say (unchanged without ``call``)."""
    if call is None:
        return view
    tool = services.agent.tool_for(call)
    title = (tool.title or tool.id) if tool is not None else None  # SPEC 2: default the id
    mcp = tool if isinstance(tool, MCPTool) else None
    rules = services.policy.card(call)
    return replace(
        view,
        title=title,
        server=mcp.server if mcp else None,
        remote_name=mcp.remote_name if mcp else None,
        destructive=call.requirement.destructive,
        rules=replace(
            rules, approvals_required=max(rules.approvals_required, call.approvals_required)
        ),
        approved_by=tuple(call.approved_by),
        expires_at=call.expires_at,
        grantable=call.grantable,
        extendable=extendable(call),
        why=why_of(call),
        edited_from=call.edited_from,
        edited_by=call.edited_by,
    )


def extendable(call: PendingToolCall) -> bool:
    """Whether ``call``'s rule allows Extend: it expires, and may wait longer than its TTL."""
    rule = call.requirement
    most, ttl = rule.max_ttl_seconds, rule.ttl_seconds
    return call.expires_at is not None and ttl is not None and most is not None and most > ttl


def why_of(call: PendingToolCall) -> Why:
    """Why ``call`` waits and under which rule, as the gate stored it (its ``requirement``)."""
    said = call.requirement
    return Why(
        reasons=tuple(said.reasons),
        rule_number=said.rule_number,
        rule_source=said.rule_source,
        rule_text=said.rule_text,
    )
