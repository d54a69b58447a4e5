"""What an agent is built from: its own definition (``AgentSpec``), a host's parts
(``ServedParts``), and tools that change while it is served (``ToolSource``, ``ToolGroups``).

A ``Runtime`` is built from a spec and parts at once (``Runtime.build``): nothing is installed
on an agent afterwards, so there is no order of calls to get right. What the definition gives
itself wins over a host's part (its storage, memory, decision policy, claim lease, TTL).

Example:
    >>> mcp = ToolGroups(taken=agent.tools)            # doctest: +SKIP
    >>> served = agent.served(ServedParts(storage=store, tools=mcp))  # doctest: +SKIP
    >>> mcp.replace("github", github_tools)            # offered from the next model turn on
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from agents._config import tool_map
from agents._hooks import Hooks
from agents.decisions import CallRulesFn, DecisionPolicy
from agents.errors import AgentConfigError
from agents.memory import Memory
from agents.models._base import Model
from agents.observing._observe import Observer
from agents.running._runner import Runner
from storage import Storage
from tools import Tool


class ToolSource(Protocol):
    """Tools an agent offers besides its own, read at each model turn and each tool lookup
    (so a server's refreshed list is offered from the next turn on, never mid-turn)."""

    def current_tools(self) -> Mapping[str, Tool]:
        """The tools now, by the name the model sees (not changed in place afterwards)."""
        ...


class ToolGroups:
    """A ``ToolSource`` of named groups (one per MCP server, say), each replaced whole.

    A name held by another group, or in ``taken`` (the agent's own tools), is refused with
    ``AgentConfigError`` and the group keeps its previous tools. The mapping handed out is
    swapped, never changed, so a turn in progress keeps the tools it started with.
    """

    def __init__(self, *, taken: Iterable[str] = ()) -> None:
        self._taken = frozenset(taken)
        self._groups: dict[str, dict[str, Tool]] = {}
        self._current: Mapping[str, Tool] = MappingProxyType({})

    def replace(self, group: str, tools: Sequence[Tool]) -> None:
        """Offer ``tools`` as ``group``'s (its previous tools dropped), keyed by tool id."""
        new = tool_map(tools)
        others = {name for key, held in self._groups.items() if key != group for name in held}
        clash = sorted(set(new) & (others | self._taken))
        if clash:
            raise AgentConfigError(
                f"tools named {clash} are taken (by the agent or another group); rename them"
            )
        self._groups[group] = new
        self._current = MappingProxyType(
            {name: tool for held in self._groups.values() for name, tool in held.items()}
        )

    def current_tools(self) -> Mapping[str, Tool]:
        """Every group's tools now."""
        return self._current


@dataclass(frozen=True, kw_only=True)
class ServedParts:
    """A host's parts for an agent it serves (``Agent.served``), all given at once.

    Example:
        >>> served = agent.served(ServedParts(storage=store, memory=Memory(),
        ...                                   decision_policy=rules, observers=(metrics,)))
    """

    storage: Storage | None = None
    """For an agent given no storage (nor a memory with one); sub-agents inherit it."""
    memory: Memory | None = None
    """For an agent given no memory; a memory without storage is kept on the agent's storage."""
    runner: Runner | None = None
    """Where runs go in the background (replaces the agent's; sub-agents share it)."""
    decision_policy: DecisionPolicy | None = None
    """Who may decide, unless the agent was given its own (sub-agents use the top's)."""
    call_rules: CallRulesFn | None = None
    """The host's rules that may add approval, a quorum or a TTL to calls (see ``CallRules``),
    for the agent and its sub-agents."""
    tools: ToolSource | None = None
    """Tools offered besides the agent's own (the agent's own win a name both hold)."""
    observers: tuple[Observer, ...] = ()
    """Told about every decision and tool execution of the agent and its sub-agents."""
    claim_lease_seconds: float | None = None
    """The claim lease, unless the agent was given one."""
    approval_ttl_seconds: float | None = None
    """The approval TTL, unless the agent's ``default_options`` has one."""
    model: Model | None = None
    """In place of the agent's own model and its sub-agents' (None: their own), e.g. an
    offline model to try the tools without a key (``MODEL=offline``)."""


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """An agent's own definition: what its constructor was given, checked."""

    id: str
    name: str
    instructions: str
    description: str
    model: Model
    tools: Mapping[str, Tool]
    agents: Mapping[str, AgentSpec]
    hooks: Hooks
    memory: Memory | None
    storage: Storage | None
    runner: Runner
    default_options: dict[str, Any] = field(default_factory=dict)
    decision_policy: DecisionPolicy | None = None
    claim_lease_seconds: float | None = None
    """None: the host's, else the default (30 s)."""

    @property
    def own_storage(self) -> Storage | None:
        """The storage this agent chose: given, or its memory's."""
        if self.storage is not None:
            return self.storage
        return self.memory.storage if self.memory is not None else None
