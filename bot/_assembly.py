"""The served agent, built once from typed parts (``serve_agent``).

Everything the bot adds to the agent it serves is given in one ``ServedParts``, at once: the
configured storage and a memory (for an agent given none), the approval rules built from
``APPROVERS``, ``ALLOW_SELF_APPROVAL`` and the policy file (the decision policy, and the call
rules that may add approval, a quorum or a TTL), ``CLAIM_LEASE_SECONDS`` and
``APPROVAL_TTL_SECONDS``, the offline model in place of every agent's own with
``MODEL=offline``, the MCP servers' tools (a ``ToolSource`` their manager keeps
current) and the observers (metrics). The rules live on the agent, so every surface mounted
on it (Slack, the HTTP API, the local workspace) enforces the same ones; what the agent given
brought itself (storage, memory, decision policy, lease, TTL) wins.

Example:
    >>> served = serve_agent(agent, settings=settings, storage=store, client=client)
    >>> services = create_services(agent=served.agent, policy=served.policy, client=client,
    ...                            settings=settings)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, Observer, ServedParts, ToolSource
from agents.memory import Memory
from bot._mcp_servers import MCPTools
from bot._settings import Settings
from bot.demo import DemoModel
from bot.policy import Policy
from bot.policy._approval_rules import agent_rules
from bot.policy._usergroups import UserGroups
from storage import Storage

if TYPE_CHECKING:
    from bot.gateway import Gateway, Presenter


@dataclass(frozen=True, kw_only=True)
class ServedAgent:
    """The agent the bot serves and the policy objects built with it."""

    agent: Agent
    """The served agent: its rules, storage, tools and observers are its own (its
    ``decision_policy`` is the one in effect: its own, else the bot's rules)."""
    policy: Policy
    """Who may decide, as the edges ask it: the decision policy in effect, the policy file
    matched against calls (what cards show, whether Approve confirms), the user groups."""
    parts: ServedParts
    """The bot's parts the agent was served on (the gateway agent is served on the same)."""


def serve_agent(
    agent: Agent,
    *,
    settings: Settings,
    storage: Storage,
    client: AsyncWebClient,
    tools: ToolSource | None = None,
    observers: Sequence[Observer] = (),
) -> ServedAgent:
    """``agent`` as the bot serves it, built once (``agent`` itself is unchanged).

    ``client`` resolves the user groups named as approvers; ``tools`` are offered besides the
    agent's own (the MCP servers'); ``observers`` hear of every decision and tool execution.
    """
    rules = agent_rules(settings, agent, UserGroups(client))
    parts = ServedParts(
        storage=storage,
        memory=Memory(),  # for an agent given none: kept on the agent's storage
        decision_policy=rules.decision_policy,
        call_rules=rules.call_rules,
        tools=tools,
        observers=tuple(observers),
        claim_lease_seconds=rules.claim_lease_seconds,
        approval_ttl_seconds=rules.approval_ttl_seconds,
        model=DemoModel() if settings.model == "offline" else None,
    )
    served = agent.served(parts)
    decision = served.decision_policy or rules.decision_policy
    policy = Policy(decision=decision, calls=rules.calls, groups=rules.groups)
    return ServedAgent(agent=served, policy=policy, parts=parts)


def serve_gateway(
    served: ServedAgent,
    *,
    settings: Settings,
    mcp: MCPTools,
    presenter: Presenter | None = None,
) -> Gateway:
    """The gateway (SPEC 17), its agent served on the same parts and rules as ``served`` (one
    storage, one decision policy, one policy file), with the MCP servers' tools and the
    coding agents' tools (``GatewayTools``), and a ``Wakeups`` observer so a decision taken
    here ends a client's wait at once. (Imported here: a bot without the gateway does not load
    the MCP server side.)"""
    from bot.gateway import Gateway, GatewayTools, HookGate, Wakeups, gateway_agent

    wakeups = Wakeups()
    tools = GatewayTools(
        mcp.tools,
        mcp.servers,
        HookGate(settings.policy),
        output_max_bytes=settings.tool_output_max_bytes,
    )
    parts = replace(
        served.parts,
        memory=None,  # a gateway call is one call, in no thread
        runner=served.agent.runner,  # one bounded runner, drained at shutdown, for both
        decision_policy=served.policy.decision,
        tools=tools,
        observers=(*served.parts.observers, wakeups.observer()),
    )
    return Gateway(gateway_agent().served(parts), tools, wakeups, presenter)
