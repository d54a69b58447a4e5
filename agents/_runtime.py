"""``Runtime``: what the run loop, the executor and the decision code need of one agent.

``Agent`` builds it and stays a thin public facade; every helper takes a ``Runtime`` (never
the ``Agent``). Sub-agents are runtimes too, by their key. ``storage`` and ``memory`` may be
replaced after construction (``Agent.use_storage``, a supervisor handing its storage down),
which is why helpers read them from here at the moment they need them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
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
from agents.deciding._state import RunState
from agents.decisions import CallRules, CallRulesFn, DecisionPolicy
from agents.errors import AgentConfigError
from agents.memory import Memory
from agents.models._base import Model
from agents.observing._observe import Observer
from agents.running._runner import Runner
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


@dataclass(kw_only=True, eq=False)
class Runtime:
    """One agent's definition and services, as the helpers see them."""

    id: str
    name: str
    instructions: str
    description: str
    model: Model
    tools: dict[str, Tool]
    """By the name the model sees."""
    agents: dict[str, Runtime]
    """Sub-agents by key (offered to the model as ``agent-<key>``)."""
    hooks: Hooks
    memory: Memory | None
    storage: Storage
    storage_explicit: bool
    """True once the storage was chosen (given, or handed down explicitly): kept from then on."""
    runner: Runner
    """Where runs started from outside (``stream``, decisions) go in the background."""
    default_options: dict[str, Any] = field(default_factory=dict)
    decision_policy: DecisionPolicy | None = None
    """Who may decide (a supervisor's is used by its sub-agents); None: anyone."""
    claim_lease_seconds: float = DEFAULT_CLAIM_LEASE_SECONDS
    """How long a claim is held without renewal (renewed while its tool runs)."""
    owner: str = INSTANCE_ID
    """Written on every claim this process takes."""
    call_rules: CallRulesFn | None = None
    """A host's rules that may add approval, a quorum or a TTL to a call (a supervisor's is
    used by its sub-agents); None: the tools' own settings only."""
    path: tuple[str, ...] = ()
    """Agent ids from the top supervisor down to this agent (empty: this agent is the top)."""
    observers: list[Observer] = field(default_factory=list)
    """Told about decisions and tool executions (one list shared with the sub-agents)."""

    @classmethod
    def build(
        cls,
        *,
        id: str,
        name: str,
        instructions: str,
        description: str,
        model: Model,
        tools: dict[str, Tool],
        agents: dict[str, Runtime],
        hooks: Hooks,
        memory: Memory | None,
        storage: Storage | None,
        runner: Runner,
        default_options: dict[str, Any],
        decision_policy: DecisionPolicy | None = None,
        claim_lease_seconds: float = DEFAULT_CLAIM_LEASE_SECONDS,
    ) -> Runtime:
        """A runtime on ``storage``, else ``memory``'s, else an in-memory store (with a
        warning); the sub-agents in ``agents`` inherit that storage and share ``runner``."""
        chosen = storage or (memory.storage if memory else None)
        if chosen is None:
            logger.warning(
                "agent %r has no storage: using an in-memory store, so pending approvals do not "
                "survive a restart. Pass storage=create_storage(url)",
                id,
            )
            chosen = InMemoryStorage()
        explicit = storage is not None or (memory is not None and memory.storage is not None)
        if memory is not None and memory.storage is None:
            memory.storage = chosen
        rt = cls(
            id=id,
            name=name,
            instructions=instructions,
            description=description,
            model=model,
            tools=tools,
            agents=agents,
            hooks=hooks,
            memory=memory,
            storage=chosen,
            storage_explicit=explicit,
            runner=runner,
            default_options=default_options,
            decision_policy=decision_policy,
            claim_lease_seconds=claim_lease_seconds,
        )
        for sub in rt.agents.values():
            sub.inherit_storage(chosen, explicit=explicit)
            sub.use_runner(rt.runner)
            sub.use_supervisor_rules(decision_policy, claim_lease_seconds)
            sub.use_observers(rt.observers)
        return rt

    # -- configuration changes -------------------------------------------------------------
    def use_storage(self, storage: Storage, *, memory: Memory | None = None) -> None:
        """Adopt ``storage`` (and ``memory``) unless this agent was given its own."""
        if not self.storage_explicit:
            self.storage = storage
            self.storage_explicit = True
            if self.memory is not None and self.memory.storage is None:
                self.memory.storage = storage
        if self.memory is None and memory is not None:
            self.memory = memory
        for sub in self.agents.values():
            sub.inherit_storage(self.storage, explicit=True)

    def inherit_storage(self, storage: Storage, *, explicit: bool) -> None:
        """Take a supervisor's storage unless this agent chose its own; pass it further down."""
        if not self.storage_explicit:
            self.storage = storage
            self.storage_explicit = explicit
        for sub in self.agents.values():
            sub.inherit_storage(self.storage, explicit=explicit)

    def use_runner(self, runner: Runner) -> None:
        """Run on ``runner`` (a supervisor's), and so do the sub-agents."""
        self.runner = runner
        for sub in self.agents.values():
            sub.use_runner(runner)

    def fill_rules(
        self,
        *,
        decision_policy: DecisionPolicy | None,
        claim_lease_seconds: float | None,
        approval_ttl_seconds: float | None,
        call_rules: CallRulesFn | None,
    ) -> DecisionPolicy | None:
        """``Agent.use_decision_rules``: what this agent was not built with, filled in."""
        policy = self.decision_policy or decision_policy
        lease = self.claim_lease_seconds
        if claim_lease_seconds is not None and lease == DEFAULT_CLAIM_LEASE_SECONDS:
            lease = check_lease(claim_lease_seconds)
        self.use_supervisor_rules(policy, lease)
        if approval_ttl_seconds is not None and "approval_ttl_seconds" not in self.default_options:
            self.default_options = check_options(
                {**self.default_options, "approval_ttl_seconds": approval_ttl_seconds}
            )
        if call_rules is not None:
            self.use_call_rules(call_rules)
        return policy

    def use_supervisor_rules(self, policy: DecisionPolicy | None, lease_seconds: float) -> None:
        """Decide by a supervisor's policy and lease (a decision arrives through it)."""
        self.decision_policy = policy
        self.claim_lease_seconds = lease_seconds
        for sub in self.agents.values():
            sub.use_supervisor_rules(policy, lease_seconds)

    def use_call_rules(self, fn: CallRulesFn | None, path: tuple[str, ...] = ()) -> None:
        """Gate calls by ``fn`` too (see ``CallRules``); sub-agents follow, under ``path``."""
        self.call_rules = fn
        self.path = path or (self.id,)
        for sub in self.agents.values():
            sub.use_call_rules(fn, (*self.path, sub.id))

    def rules_for(self, name: str, args: dict[str, Any]) -> CallRules | None:
        """The host's rules for a call of this agent (given a copy of ``args``); a
        ``call_rules`` that raises requires approval (fail safe)."""
        if self.call_rules is None:
            return None
        tool = self.tools.get(name)
        try:
            return self.call_rules(
                name, tool.id if tool else name, self.path or (self.id,), dict(args)
            )
        except Exception:
            logger.exception(
                "call_rules failed for %s of agent %s: approval required", name, self.id
            )
            return CallRules(require_approval=True)

    def add_tools(self, tools: dict[str, Tool], replacing: Collection[str] = ()) -> None:
        """Offer ``tools`` from the next model turn on, after dropping the tools named in
        ``replacing`` (say, an MCP server's previous list); a name still taken raises
        ``AgentConfigError``. The dict is swapped, never changed in place, so a turn in
        progress keeps the tools it started with."""
        dropped = set(replacing)
        kept = {name: tool for name, tool in self.tools.items() if name not in dropped}
        taken = sorted(set(kept) & set(tools))
        if taken:
            raise AgentConfigError(
                f"agent {self.id!r} already has tools named {taken}; rename the new ones"
            )
        self.tools = {**kept, **tools}

    def use_observers(self, observers: list[Observer]) -> None:
        """Report to ``observers`` (a supervisor's list, shared), and so do the sub-agents."""
        self.observers = observers
        for sub in self.agents.values():
            sub.use_observers(observers)

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
