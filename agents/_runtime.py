"""``Runtime``: what the run loop, the executor and the decision code need of one agent.

``Agent`` builds it and stays a thin public facade; every helper takes a ``Runtime`` (never
the ``Agent``). It is built once, from an agent's own definition (``AgentSpec``) and a host's
parts (``ServedParts``), with every sub-agent's runtime built in the same call from what its
supervisor hands down (``_Handed``): nothing is installed on it afterwards. Tools that change
while the agent is served come from its ``tool_source``, read at each lookup.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents._config import (
    DEFAULT_MAX_STEPS,
    DELEGATION_PREFIX,
    check_lease,
    check_options,
    check_ttl,
    json_safe,
)
from agents._hooks import Hooks
from agents._ids import new_id
from agents._messages import Message, ToolSpec
from agents._parts import AgentSpec, ServedParts, ToolSource
from agents.decisions import CallRulesFn, DecisionPolicy
from agents.memory import Memory
from agents.models._base import Model
from agents.observing._observe import Observer
from agents.running._runner import Runner
from agents.stored._state import RunState
from storage import AuditEvent, AuditKind, InMemoryStorage, Storage, utcnow
from tools import ApprovalPredicate, Tool

logger = logging.getLogger(__name__)

INSTANCE_ID = new_id()
"""This process: the owner written on every claim it takes (and renews while the tool runs)."""

DEFAULT_CLAIM_LEASE_SECONDS = 30.0
"""How long a claim stays this process's without renewal before another may take it over."""

_DELEGATION_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "The task to carry out"}},
    "required": ["prompt"],
    "additionalProperties": False,
}


class FallbackStore:
    """The in-memory store of an agent that has no storage, with its warning: logged the first
    time a run (or a decision, a listing) uses it, never merely because an agent was built
    without storage (a host may give it one: ``Agent.served``)."""

    def __init__(self, agent_id: str) -> None:
        self.storage = InMemoryStorage()
        self._agent_id = agent_id
        self._warned = False

    def use(self) -> Storage:
        """The store, warning once that nothing in it survives a restart."""
        if not self._warned:
            self._warned = True
            logger.warning(
                "agent %r has no storage: using an in-memory store, so pending approvals do not "
                "survive a restart. Pass storage=create_storage(url)",
                self._agent_id,
            )
        return self.storage


@dataclass(frozen=True, kw_only=True)
class _Handed:
    """What a supervisor hands down to its sub-agents, in one place."""

    storage: Storage | None
    """The supervisor's storage (None: its fallback store), unless a sub-agent chose its own."""
    fallback: FallbackStore
    runner: Runner
    decision_policy: DecisionPolicy | None
    claim_lease_seconds: float
    call_rules: CallRulesFn | None
    observers: tuple[Observer, ...]
    path: tuple[str, ...]
    """The supervisor's agent path."""
    model: Model | None = None
    """The host's model in place of every agent's own (``ServedParts.model``)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Runtime:
    """One agent's definition and services, as the helpers see them (built once: ``build``)."""

    id: str
    name: str
    instructions: str
    description: str
    model: Model
    own_tools: Mapping[str, Tool]
    """The agent's own tools, by the name the model sees."""
    tool_source: ToolSource | None
    """Tools offered besides (a host's MCP tools), read at each lookup."""
    agents: Mapping[str, Runtime]
    """Sub-agents by key (offered to the model as ``agent-<key>``)."""
    hooks: Hooks
    memory: Memory | None
    chosen_storage: Storage | None
    """The storage given (by the agent, its memory, its supervisor or its host); None: the
    ``fallback`` store."""
    fallback: FallbackStore
    runner: Runner
    """Where runs started from outside (``stream``, decisions) go in the background."""
    default_options: dict[str, Any]
    decision_policy: DecisionPolicy | None
    """Who may decide (a supervisor's is used by its sub-agents); None: anyone."""
    claim_lease_seconds: float
    """How long a claim is held without renewal (renewed while its tool runs)."""
    call_rules: CallRulesFn | None
    """A host's rules that may add approval, a quorum or a TTL to a call (a supervisor's is
    used by its sub-agents); None: the tools' own settings only."""
    path: tuple[str, ...]
    """Agent ids from the top supervisor down to this agent."""
    observers: tuple[Observer, ...]
    """Told about decisions and tool executions (the supervisor's, for the sub-agents)."""
    owner: str = INSTANCE_ID
    """Written on every claim this process takes."""

    @classmethod
    def build(
        cls, spec: AgentSpec, parts: ServedParts, fallback: FallbackStore | None = None
    ) -> Runtime:
        """The runtime of ``spec`` on a host's ``parts``, its sub-agents' with it.

        What the spec gives itself wins: its storage (or its memory's), memory, decision
        policy, claim lease and ``approval_ttl_seconds`` option; the parts fill in the rest.
        Without storage anywhere, runs use ``fallback`` (an in-memory store, with a warning).
        """
        storage = spec.own_storage or parts.storage
        if storage is None and parts.memory is not None and spec.memory is None:
            storage = parts.memory.storage
        options = spec.default_options
        ttl = parts.approval_ttl_seconds
        if ttl is not None and "approval_ttl_seconds" not in options:
            options = check_options({**options, "approval_ttl_seconds": ttl})
        lease = spec.claim_lease_seconds or parts.claim_lease_seconds
        top = _Handed(
            storage=storage,
            fallback=fallback or FallbackStore(spec.id),
            runner=parts.runner or spec.runner,
            decision_policy=spec.decision_policy or parts.decision_policy,
            claim_lease_seconds=check_lease(lease or DEFAULT_CLAIM_LEASE_SECONDS),
            call_rules=parts.call_rules,
            observers=parts.observers,
            path=(),
            model=parts.model,
        )
        return cls._of(
            spec,
            top,
            memory=spec.memory or parts.memory,
            options=options,
            tool_source=parts.tools,
        )

    @classmethod
    def _of(
        cls,
        spec: AgentSpec,
        given: _Handed,
        *,
        memory: Memory | None,
        options: dict[str, Any],
        tool_source: ToolSource | None = None,
    ) -> Runtime:
        """``spec`` on what it was ``given``; its sub-agents on what it hands down."""
        storage = spec.own_storage or given.storage
        path = (*given.path, spec.id)
        if memory is not None and memory.storage is None:  # kept on the agent's storage
            store = storage or given.fallback.storage
            memory = Memory(storage=store, last_messages=memory.last_messages)
        down = _Handed(
            storage=storage,
            fallback=given.fallback,
            runner=given.runner,
            decision_policy=given.decision_policy,
            claim_lease_seconds=given.claim_lease_seconds,
            call_rules=given.call_rules,
            observers=given.observers,
            path=path,
            model=given.model,
        )
        return cls(
            id=spec.id,
            name=spec.name,
            instructions=spec.instructions,
            description=spec.description,
            model=given.model or spec.model,
            own_tools=spec.tools,
            tool_source=tool_source,
            agents={
                key: cls._of(sub, down, memory=sub.memory, options=sub.default_options)
                for key, sub in spec.agents.items()
            },
            hooks=spec.hooks,
            memory=memory,
            chosen_storage=storage,
            fallback=given.fallback,
            runner=given.runner,
            default_options=options,
            decision_policy=given.decision_policy,
            claim_lease_seconds=given.claim_lease_seconds,
            call_rules=given.call_rules,
            path=path,
            observers=given.observers,
        )

    @property
    def storage(self) -> Storage:
        """The store of this agent's snapshots, claims and audit log."""
        if self.chosen_storage is not None:
            return self.chosen_storage
        return self.fallback.use()

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every tool offered now, by name: the ``tool_source``'s, then the agent's own (which
        win a name both hold)."""
        if self.tool_source is None:
            return self.own_tools
        return {**self.tool_source.current_tools(), **self.own_tools}

    # -- lookups ---------------------------------------------------------------------------
    def delegate_for(self, tool_name: str) -> Runtime | None:
        """The sub-agent behind a delegation tool name, or None."""
        if tool_name.startswith(DELEGATION_PREFIX):
            return self.agents.get(tool_name.removeprefix(DELEGATION_PREFIX))
        return None

    def find_tool(self, agent_path: list[str], tool_name: str) -> Tool | None:
        """The tool a pending call will run, following ``agent_path`` down the sub-agents."""
        owner: Runtime = self
        for agent_id in agent_path[1:]:
            nxt = next((a for a in owner.agents.values() if a.id == agent_id), None)
            if nxt is None:
                return None
            owner = nxt
        return owner.tools.get(tool_name)

    def tool_specs(self) -> list[ToolSpec]:
        """What the model is offered: the tools, then one delegation tool per sub-agent."""
        specs = [
            ToolSpec(
                name=name, description=tool.description, parameters=tool.shared_parameters_schema
            )
            for name, tool in self.tools.items()
        ]
        specs.extend(
            ToolSpec(
                name=f"{DELEGATION_PREFIX}{key}",
                description=sub.description or f"Delegate a task to the {sub.name} agent",
                parameters=_DELEGATION_PARAMETERS,
            )
            for key, sub in self.agents.items()
        )
        return specs

    async def conversation(self, state: RunState) -> list[Message]:
        """The messages the model sees: instructions, thread history, this run."""
        messages: list[Message] = []
        if self.instructions:
            messages.append(_system_message(self.instructions))
        if self.memory is not None and state.thread_id:
            messages.extend(await self.memory.history(state.thread_id, exclude_run_id=state.run_id))
        messages.extend(state.messages)
        return messages

    # -- runs ------------------------------------------------------------------------------
    def start_state(
        self,
        *,
        thread_id: str | None,
        resource_id: str | None,
        require_tool_approval: bool | ApprovalPredicate | None,
        max_steps: int | None,
        request_context: Mapping[str, Any] | None,
        auto_resume: bool,
        requested_by: str | None = None,
        approval_ttl_seconds: float | None = None,
    ) -> tuple[RunState, bool | ApprovalPredicate]:
        """A new run's state and its approval rule (call options over ``default_options``)."""
        options = self.default_options
        ttl = check_ttl(
            approval_ttl_seconds
            if approval_ttl_seconds is not None
            else options.get("approval_ttl_seconds")
        )
        approval = (
            require_tool_approval
            if require_tool_approval is not None
            else options.get("require_tool_approval", False)
        )
        context = dict(request_context or options.get("request_context") or {})
        state = RunState(
            run_id=new_id(),
            agent_id=self.id,
            thread_id=thread_id,
            resource_id=resource_id,
            max_steps=max_steps or int(options.get("max_steps") or DEFAULT_MAX_STEPS),
            require_tool_approval=approval is not False and approval is not None,
            auto_resume=auto_resume,
            request_context=json_safe(context) if context else {},  # most runs have none
            requested_by=requested_by,
            approval_ttl_seconds=ttl,
        )
        return state, approval

    def audit_event(self, event_kind: AuditKind, state: RunState, **fields: Any) -> AuditEvent:
        """An audit event about a run of this agent (to write with a state change)."""
        return AuditEvent(
            id=new_id(),
            at=utcnow(),
            kind=event_kind,
            run_id=state.run_id,
            thread_id=state.thread_id,
            agent_id=self.id,
            **fields,
        )

    async def audit(self, event_kind: AuditKind, state: RunState, **fields: Any) -> None:
        """Append an audit event about a run of this agent now (outside any state change)."""
        await self.storage.append_audit(self.audit_event(event_kind, state, **fields))


@functools.lru_cache(maxsize=256)
def _system_message(instructions: str) -> Message:
    """The system message of ``instructions``: a frozen ``Message``, so one serves every turn of
    every run of every agent with these instructions (instead of one validated per turn)."""
    return Message(role="system", content=instructions)
