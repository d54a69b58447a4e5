"""Gate: the tool's definition, as a call is proposed (SPEC 3.3, 14): the call is bound to its
tool's ``definition_digest`` (stored with it) and says whether the tool calls itself
destructive (an MCP server's annotations: Approve confirms). Deciding, ``_redefined`` holds
the decision to that digest."""

from __future__ import annotations

from dataclasses import replace

from agents.gate._proposal import Needs, Proposal


async def definition(proposal: Proposal, needs: Needs) -> Needs:
    """Whether the tool says it may destroy (the digest is the tool's: ``Proposal.tool``)."""
    tool = proposal.tool
    if tool is None or not tool.destructive:
        return needs
    return replace(needs, requirement=needs.requirement.model_copy(update={"destructive": True}))
