"""What a card shows about a pending call, read from the stored call, its tool and the rules:
the tool's title and MCP server, whether it is destructive, who may approve, quorum, expiry."""

from __future__ import annotations

from dataclasses import replace

from agents import Agent, PendingToolCall
from bot.policy._card_rules import is_destructive
from bot.slack._services import Services
from bot.slack.blocks._card import CardView
from tools.mcp import MCPTool


async def stored_call(
    agent: Agent, thread_id: str, run_id: str, tool_call_id: str
) -> PendingToolCall | None:
    """The pending call ``tool_call_id`` of ``run_id`` in ``thread_id``, if it still waits."""
    page = await agent.list_suspended_runs(thread_id=thread_id, per_page=100)
    for run in page.runs:
        if run.run_id == run_id:
            for call in run.tool_calls:
                if call.tool_call_id == tool_call_id:
                    return call
    return None


def described(services: Services, view: CardView, call: PendingToolCall | None) -> CardView:
    """``view`` with what the stored ``call`` and its tool say (unchanged without ``call``)."""
    if call is None:
        return view
    tool = services.agent.tool_for(call)
    title = None
    if tool is not None:
        title = tool.title or tool.description or None
    mcp = tool if isinstance(tool, MCPTool) else None
    rules = services.card_rules(call, tool)
    return replace(
        view,
        title=title,
        server=mcp.server if mcp else None,
        remote_name=mcp.remote_name if mcp else None,
        destructive=is_destructive(tool),
        rules=replace(
            rules, approvals_required=max(rules.approvals_required, call.approvals_required)
        ),
        approved_by=tuple(call.approved_by),
        expires_at=call.expires_at,
    )
