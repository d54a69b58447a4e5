"""``Agent``: construction, running, and the decision methods (SPEC 3.1, 3.3)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agents import _deciding
from agents._config import (
    DEFAULT_MAX_STEPS,
    DELEGATION_PREFIX,
    check_options,
    json_safe,
    resolve_model,
    tool_map,
)
from agents._decisions import Decisions
from agents._executor import Executor
from agents._hooks import Hooks
from agents._listing import list_suspended_runs, send_tool_approval
from agents._messages import Message, ToolSpec
from agents._results import PendingToolCall, RunResult, SuspendedRunsPage
from agents._run import Run
from agents._state import PendingCallState, RunState
from agents._stream import AgentStream
from agents._tasks import TaskSet
from agents.errors import AgentConfigError
from agents.memory import Memory
from agents.models._base import Model
from storage import InMemoryStorage, Storage
from tools import ApprovalPredicate, Tool

logger = logging.getLogger(__name__)


class Agent:
    """An LLM agent whose dangerous tool calls wait for a person.

    Example:
        >>> from agents import Agent
        >>> from agents.models import ScriptedModel, call, reply
        >>> agent = Agent(id="ops", instructions="You run ops.", tools=[delete_tool],
        ...               model=ScriptedModel([call("delete-record", {"id": "abc-123"}),
        ...                                    reply("Deleted.")]))
        >>> result = await agent.generate("Delete record abc-123")
        >>> result.finish_reason
        'suspended'
        >>> done = await agent.approve_tool_call_generate(run_id=result.run_id)
    """

    def __init__(
        self,
        *,
        id: str,
        model: Model | str,
        name: str | None = None,
        instructions: str = "",
        description: str = "",
        tools: Mapping[str, Tool] | Sequence[Tool] | None = None,
        agents: Mapping[str, Agent] | None = None,
        memory: Memory | None = None,
        storage: Storage | None = None,
        hooks: Hooks | None = None,
        default_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not id:
            raise AgentConfigError("Agent needs a non-empty id")
        self.id = id
        """Stable id; stored with every run."""
        self.name = name or id
        """Display name."""
        self.instructions = instructions
        """The system prompt."""
        self.description = description
        """What this agent does (shown to a supervisor's model)."""
        self.model: Model = resolve_model(model)
        """The model behind the agent."""
        self.hooks = hooks or Hooks()
        """Callbacks around tool execution."""
        self._tools = tool_map(tools)
        self.agents: dict[str, Agent] = dict(agents or {})
        """Sub-agents, each offered to the model as the tool ``agent-<key>``."""
        self.default_options = check_options(dict(default_options or {}))
        """Options applied to every run unless the call overrides them."""
        self.memory = memory
        """Where threads are kept (None: the model sees only the current run)."""
        self._storage_explicit = storage is not None or (
            memory is not None and memory.storage is not None
        )
        chosen = storage or (memory.storage if memory else None)
        if chosen is None:
            logger.warning(
                "agent %r has no storage: using an in-memory store, so pending approvals do not "
                "survive a restart. Pass storage=create_storage(url)",
                id,
            )
            chosen = InMemoryStorage()
        self._storage: Storage = chosen
        if memory is not None and memory.storage is None:
            memory.storage = chosen
        self._tasks = TaskSet()
        self._executor = Executor(self)
        self._decisions = Decisions(self)
        for sub in self.agents.values():
            sub._inherit_storage(chosen, explicit=self._storage_explicit)

    # -- configuration ---------------------------------------------------------------------
    @property
    def storage(self) -> Storage:
        """The store holding this agent's snapshots, claims, audit log (and memory)."""
        return self._storage

    @property
    def tools(self) -> dict[str, Tool]:
        """Tools by the name the model sees."""
        return dict(self._tools)

    def use_storage(self, storage: Storage, *, memory: Memory | None = None) -> None:
        """Adopt ``storage`` (and ``memory``) unless the agent was given its own."""
        if not self._storage_explicit:
            self._storage = storage
            self._storage_explicit = True
            if self.memory is not None and self.memory.storage is None:
                self.memory.storage = storage
        if self.memory is None and memory is not None:
            self.memory = memory
        for sub in self.agents.values():
            sub._inherit_storage(self._storage, explicit=True)

    def _inherit_storage(self, storage: Storage, *, explicit: bool) -> None:
        if not self._storage_explicit:
            self._storage = storage
            self._storage_explicit = explicit
        for sub in self.agents.values():
            sub._inherit_storage(self._storage, explicit=explicit)

    def _delegate_for(self, tool_name: str) -> Agent | None:
        if tool_name.startswith(DELEGATION_PREFIX):
            return self.agents.get(tool_name.removeprefix(DELEGATION_PREFIX))
        return None

    def _tool_specs(self) -> list[ToolSpec]:
        specs = [
            ToolSpec(name=name, description=tool.description, parameters=tool.parameters_schema())
            for name, tool in self._tools.items()
        ]
        for key, sub in self.agents.items():
            specs.append(
                ToolSpec(
                    name=f"{DELEGATION_PREFIX}{key}",
                    description=sub.description or f"Delegate a task to the {sub.name} agent",
                    parameters={
                        "type": "object",
                        "properties": {
                            "prompt": {"type": "string", "description": "The task to carry out"}
                        },
                        "required": ["prompt"],
                        "additionalProperties": False,
                    },
                )
            )
        return specs

    async def _conversation(self, state: RunState) -> list[Message]:
        messages: list[Message] = []
        if self.instructions:
            messages.append(Message(role="system", content=self.instructions))
        if self.memory is not None and state.thread_id:
            messages.extend(await self.memory.history(state.thread_id, exclude_run_id=state.run_id))
        messages.extend(state.messages)
        return messages

    def tool_for(self, pending: PendingToolCall) -> Tool | None:
        """The tool a pending call will run, in this agent or the sub-agent that owns it.

        Follows ``pending.agent_path`` down the sub-agents; None when no agent of that path has
        the tool (e.g. the agent definition changed since the call was stored). Approval UIs use
        it to read the tool's ``input_schema`` / ``resume_schema``.

        Example:
            >>> page = await agent.list_suspended_runs(thread_id="t1")
            >>> agent.tool_for(page.runs[0].tool_calls[0]).input_schema
        """
        return self._find_tool(list(pending.agent_path), pending.tool_name)

    def _find_tool(self, agent_path: list[str], tool_name: str) -> Tool | None:
        """The tool a pending call will run, following the agent path down."""
        owner: Agent = self
        for agent_id in agent_path[1:]:
            nxt = next((a for a in owner.agents.values() if a.id == agent_id), None)
            if nxt is None:
                return None
            owner = nxt
        return owner._tools.get(tool_name)

    async def _audit_requests(self, state: RunState, fresh: list[PendingCallState]) -> None:
        for p in fresh:
            await self._executor.audit(
                "approval-requested" if p.kind == "approval" else "suspended",
                state,
                tool_call_id=p.tool_call_id,
                data={
                    "tool_name": p.tool_name,
                    "args": p.args,
                    "fingerprint": p.fingerprint,
                    "agent_path": p.agent_path,
                    "suspend_payload": p.suspend_payload,
                },
            )

    # -- running ---------------------------------------------------------------------------
    async def stream(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        require_tool_approval: bool | ApprovalPredicate | None = None,
        max_steps: int | None = None,
        request_context: Mapping[str, Any] | None = None,
        auto_resume_suspended_tools: bool | None = None,
        decided_by: str | None = None,
    ) -> AgentStream:
        """Start a run on ``message``; returns at once with the run's stream.

        With ``auto_resume_suspended_tools`` and a tool in this thread waiting for data, the
        message is first tried as that tool's resume data (see ``agents.memory``).
        """
        options = {**self.default_options}
        approval = (
            require_tool_approval
            if require_tool_approval is not None
            else options.get("require_tool_approval", False)
        )
        auto_resume = bool(
            auto_resume_suspended_tools
            if auto_resume_suspended_tools is not None
            else options.get("auto_resume_suspended_tools", False)
        )
        context = dict(request_context or options.get("request_context") or {})
        if auto_resume and thread_id:
            from agents._auto_resume import try_auto_resume

            resumed = await try_auto_resume(
                self, message, thread_id=thread_id, resource_id=resource_id, decided_by=decided_by
            )
            if resumed is not None:
                return resumed
        state = RunState(
            run_id=uuid.uuid4().hex,
            agent_id=self.id,
            thread_id=thread_id,
            resource_id=resource_id,
            max_steps=max_steps or int(options.get("max_steps") or DEFAULT_MAX_STEPS),
            require_tool_approval=approval is not False and approval is not None,
            auto_resume=auto_resume,
            request_context=json_safe(context),
        )
        stream = AgentStream(state.run_id)
        run = Run(self, state, stream, approval_predicate=approval)
        self._tasks.start(run.start(message), name=f"run-{state.run_id}")
        return stream

    async def generate(self, message: str, **options: Any) -> RunResult:
        """Run to the end (or to the first suspension) and return the ``RunResult``.

        Raises the error that ended the run (e.g. ``ModelError``) instead of returning it.
        """
        return await _finished(await self.stream(message, **options))

    # -- deciding --------------------------------------------------------------------------
    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        args: dict[str, Any] | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Approve a pending call; it runs and the run continues on the returned stream.

        ``args`` approves with edited arguments (validated first). The call is claimed
        before this returns: a second decision raises ``AlreadyDecided``.

        Example:
            >>> stream = await agent.approve_tool_call(run_id=result.run_id)
            >>> (await stream.result()).text
        """
        return await _deciding.approve(
            self,
            run_id=run_id,
            tool_call_id=tool_call_id,
            args=args,
            fingerprint=fingerprint,
            decided_by=decided_by,
            source=source,
        )

    async def decline_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        reason: str | None = None,
        fingerprint: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decline a pending call: it never runs; the model is told (with ``reason``) and answers.

        Example:
            >>> stream = await agent.decline_tool_call(run_id=r.run_id, reason="no")
        """
        return await _deciding.decline(
            self,
            run_id=run_id,
            tool_call_id=tool_call_id,
            reason=reason,
            fingerprint=fingerprint,
            decided_by=decided_by,
            source=source,
        )

    async def resume_stream(
        self,
        resume_data: Any,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Resume a call that suspended itself; the tool runs again with ``ctx.resume_data``.

        Example:
            >>> stream = await agent.resume_stream({"priority": "high"}, run_id=rid)
        """
        return await _deciding.resume(
            self,
            resume_data,
            run_id=run_id,
            tool_call_id=tool_call_id,
            decided_by=decided_by,
            source=source,
        )

    async def approve_tool_call_generate(self, **kwargs: Any) -> RunResult:
        """``approve_tool_call`` and wait for the run's result."""
        return await _finished(await self.approve_tool_call(**kwargs))

    async def decline_tool_call_generate(self, **kwargs: Any) -> RunResult:
        """``decline_tool_call`` and wait for the run's result."""
        return await _finished(await self.decline_tool_call(**kwargs))

    async def resume_generate(self, resume_data: Any, **kwargs: Any) -> RunResult:
        """``resume_stream`` and wait for the run's result."""
        return await _finished(await self.resume_stream(resume_data, **kwargs))

    async def send_tool_approval(
        self,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool = True,
        tool_call_id: str | None = None,
        reason: str | None = None,
        decided_by: str | None = None,
        source: str = "python",
    ) -> AgentStream:
        """Decide the pending approval of a thread without knowing its run id."""
        return await send_tool_approval(
            self,
            thread_id=thread_id,
            resource_id=resource_id,
            approved=approved,
            tool_call_id=tool_call_id,
            reason=reason,
            decided_by=decided_by,
            source=source,
        )

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
    ) -> SuspendedRunsPage:
        """Runs of this agent waiting for decisions (newest first), with their pending calls."""
        return await list_suspended_runs(
            self, thread_id=thread_id, resource_id=resource_id, page=page, per_page=per_page
        )

    async def retry_run(self, *, run_id: str, decided_by: str | None = None) -> AgentStream:
        """Go on with a run that stopped on an error (``finish_reason == "error"``).

        Nothing already stored is lost: the run continues from its stored messages and tool
        results (tools that ran are not run again). A retry is single-use like a decision.

        Example:
            >>> stream = await agent.retry_run(run_id=failed.run_id)
        """
        return await _deciding.retry(self, run_id=run_id, decided_by=decided_by)

    async def recover_interrupted_runs(
        self, *, older_than_seconds: float = 300.0
    ) -> list[AgentStream]:
        """Finish calls claimed more than ``older_than_seconds`` ago whose work never ended.

        Run it at start-up (the bot does): after a crash an ``idempotent=True`` tool is retried
        with the same ``idempotency_key``; any other is reported ``interrupted`` to the model,
        never silently re-run. Choose a cutoff longer than your slowest tool.
        """
        from agents._recovery import recover_interrupted_runs

        return await recover_interrupted_runs(self, older_than_seconds)

    async def drain(self) -> None:
        """Wait for every run this agent started in the background."""
        await self._tasks.drain()


async def _finished(stream: AgentStream) -> RunResult:
    result = await stream.result()
    if result.finish_reason == "error" and result.error is not None:
        raise result.error
    return result
