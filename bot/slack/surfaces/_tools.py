"""The name a status line or task card gives a tool: its title, else its id (as the card)."""

from __future__ import annotations

from collections.abc import Sequence

from agents import PendingToolCall
from bot.slack._services import Services


def tool_title(services: Services, tool_name: str, agent_path: Sequence[str] = ()) -> str:
    """The title (else id) of the tool the model calls ``tool_name`` (under ``agent_path``);
    the name itself when no agent has such a tool."""
    probe = PendingToolCall(
        tool_call_id="",
        tool_name=tool_name,
        args={},
        requires_approval=False,
        suspend_payload=None,
        resume_schema=None,
        fingerprint="",
        agent_path=list(agent_path) or [services.agent.id],
    )
    tool = services.agent.tool_for(probe)
    return (tool.title or tool.id) if tool is not None else tool_name
