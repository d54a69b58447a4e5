"""The gateway agent (SPEC 17): agent id ``gateway``, its model the client's call itself.

Example:
    >>> agent = gateway_agent().served(parts)  # doctest: +SKIP
"""

from __future__ import annotations

from agents import Agent
from bot.gateway._model import GatewayModel

GATEWAY_AGENT_ID = "gateway"
"""The agent id of every gateway call (its runs, cards, audit events and grants)."""


def gateway_agent() -> Agent:
    """The gateway agent before it is served (``Agent.served``): its tools, storage, rules
    and observers are the host's parts, as for the agent the bot serves."""
    return Agent(
        id=GATEWAY_AGENT_ID,
        name="Gateway",
        model=GatewayModel(),
        description="Tool calls of MCP clients and coding agents, put through countersign",
    )
