"""The plumbing of the ``Agent`` facade: its definition, the parts it is served on, and the
``Runtime`` built from both at once (``Facade``); ``OnRuntime`` for the attributes of its
definition."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Generic, Self, TypeVar, cast, overload

from agents._config import check_lease, check_options, resolve_model
from agents._parts import AgentSpec, ServedParts
from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.decisions import DecisionPolicy
from agents.running._runner import Runner
from storage import Storage
from tools import Tool

T = TypeVar("T")


class OnRuntime(Generic[T]):
    """An ``Agent`` attribute read from its ``Runtime``; setting it changes the agent's
    definition and builds its runtime again (runs in progress keep the one they started on)."""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name

    @overload
    def __get__(self, agent: None, owner: type[Any]) -> OnRuntime[T]: ...
    @overload
    def __get__(self, agent: Any, owner: type[Any]) -> T: ...
    def __get__(self, agent: Any | None, owner: type[Any]) -> T | OnRuntime[T]:
        if agent is None:
            return self
        return cast(T, getattr(agent._runtime, self._name))

    def __set__(self, agent: Any, value: T) -> None:
        agent._redefine(self._name, value)


class Facade:
    """An agent's definition (``AgentSpec``), the host's parts it is served on
    (``ServedParts``) and the ``Runtime`` built from both."""

    _spec: AgentSpec
    _parts: ServedParts
    _runtime: Runtime
    _recovered_once: bool

    def _become(self, spec: AgentSpec, parts: ServedParts, runtime: Runtime) -> None:
        self._spec, self._parts, self._runtime = spec, parts, runtime
        self._recovered_once = False

    @classmethod
    def _on(cls, spec: AgentSpec, parts: ServedParts, runtime: Runtime) -> Self:
        """An agent over a runtime already built (a served agent, a sub-agent)."""
        agent = cls.__new__(cls)
        agent._become(spec, parts, runtime)
        return agent

    def _redefine(self, name: str, value: Any) -> None:
        """``agent.<attribute> = value``: the definition changed, the runtime built again on
        the same parts (and the same fallback store, so nothing stored in it is lost)."""
        if name == "default_options":
            value = check_options(dict(value))
        elif name == "model":
            value = resolve_model(value)
        elif name == "claim_lease_seconds":
            value = check_lease(value)
        spec = replace(self._spec, **{name: value})
        self._become(spec, self._parts, Runtime.build(spec, self._parts, self._runtime.fallback))

    def served(self, parts: ServedParts) -> Self:
        """This agent as a host serves it: a new agent with this definition on ``parts``,
        built at once, sub-agents included. This agent itself is unchanged.

        What the agent was given itself wins: its storage (or its memory's), memory,
        ``decision_policy``, ``claim_lease_seconds`` and ``approval_ttl_seconds`` option; the
        parts fill in the rest (see ``ServedParts``). Tools of ``parts.tools`` are looked up at
        each model turn, so a source that changes them needs nothing from the agent.

        Example:
            >>> served = agent.served(ServedParts(storage=store, memory=Memory(),
            ...                                   decision_policy=rules))
            >>> served.storage is store   # unless agent brought its own
            True
        """
        fallback = self._runtime.fallback if parts.storage is None else None
        return self._on(self._spec, parts, Runtime.build(self._spec, parts, fallback))

    @property
    def agents(self) -> dict[str, Self]:
        """Sub-agents, each offered to the model as the tool ``agent-<key>``, as this agent
        runs them (on its storage, runner and rules); each is a view: the sub-agent given to
        the constructor is not changed by its supervisor."""
        return {
            key: self._on(self._spec.agents[key], self._parts, sub)
            for key, sub in self._runtime.agents.items()
        }

    @property
    def storage(self) -> Storage:
        """The store holding this agent's snapshots, claims, audit log (and memory)."""
        return self._runtime.storage

    @property
    def tools(self) -> dict[str, Tool]:
        """Tools by the name the model sees (a host's changing tools included, as of now)."""
        return dict(self._runtime.tools)

    @property
    def runner(self) -> Runner:
        """Where this agent's runs go in the background (a supervisor's, for sub-agents)."""
        return self._runtime.runner

    @property
    def decision_policy(self) -> DecisionPolicy | None:
        """Who may decide, in effect: the agent's own, else its host's (None: anyone)."""
        return self._runtime.decision_policy

    def tool_for(self, pending: PendingToolCall) -> Tool | None:
        """The tool a pending call will run, following ``pending.agent_path`` down the
        sub-agents (None: no agent of that path has it any more). Approval UIs read its
        ``input_schema`` / ``resume_schema``.

        Example:
            >>> page = await agent.list_suspended_runs(thread_id="t1")
            >>> agent.tool_for(page.runs[0].tool_calls[0]).input_schema
        """
        return self._runtime.find_tool(list(pending.agent_path), pending.tool_name)
