"""``Agent``: the public facade. It builds a ``Runtime`` and hands every call to a helper
(the deciding half lives in ``agents.deciding._methods``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents._config import check_lease, check_options, resolve_model, tool_map
from agents._facade import Facade, OnRuntime
from agents._hooks import Hooks
from agents._parts import AgentSpec, ServedParts
from agents._results import PendingToolCall, RunResult, SuspendedRunsPage, ToolCallRecord
from agents._runtime import Runtime
from agents.deciding._extend import extend
from agents.deciding._methods import DecisionMethods, finished
from agents.deciding._recovery import recover_interrupted_runs
from agents.decisions import DecisionPolicy
from agents.errors import AgentConfigError
from agents.memory import Memory
from agents.models._base import Model
from agents.running._at_once import RanAtOnce, run_if_ungated
from agents.running._runner import Runner
from agents.running._start import start
from agents.running._stream import AgentStream
from storage import Storage
from tools import ApprovalPredicate, Tool


class Agent(Facade, DecisionMethods):
    """An LLM agent whose dangerous tool calls wait for a person.

    Deciding its pending calls (``decide``, ``approve_tool_call``, ``pending_call``, ...) is
    ``DecisionMethods``' half of the facade; its definition and how a host serves it
    (``served``) are ``Facade``'s.

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

    id = OnRuntime[str]()
    """Stable id; stored with every run."""
    name = OnRuntime[str]()
    """Display name."""
    instructions = OnRuntime[str]()
    """The system prompt."""
    description = OnRuntime[str]()
    """What this agent does (shown to a supervisor's model)."""
    model = OnRuntime[Model]()
    """The model behind the agent."""
    hooks = OnRuntime[Hooks]()
    """Callbacks around tool execution."""
    memory = OnRuntime[Memory | None]()
    """Where threads are kept (None: the model sees only the current run)."""
    default_options = OnRuntime[dict[str, Any]]()
    """Options applied to every run unless the call overrides them."""
    claim_lease_seconds = OnRuntime[float]()
    """How long a claim is held without renewal, in effect (the agent's own, else its host's,
    else 30 s)."""

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
        runner: Runner | None = None,
        decision_policy: DecisionPolicy | None = None,
        claim_lease_seconds: float | None = None,
    ) -> None:
        if not id:
            raise AgentConfigError("Agent needs a non-empty id")
        lease = None if claim_lease_seconds is None else check_lease(claim_lease_seconds)
        spec = AgentSpec(
            id=id,
            name=name or id,
            instructions=instructions,
            description=description,
            model=resolve_model(model),
            tools=tool_map(tools),
            agents={key: sub._spec for key, sub in (agents or {}).items()},
            hooks=hooks or Hooks(),
            memory=memory,
            storage=storage,
            runner=runner or Runner(),
            default_options=check_options(dict(default_options or {})),
            decision_policy=decision_policy,
            claim_lease_seconds=lease,
        )
        self._become(spec, ServedParts(), Runtime.build(spec, ServedParts()))

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
        requested_by: str | None = None,
        approval_ttl_seconds: float | None = None,
        suspended_runs: SuspendedRunsPage | None = None,
        propose_call: ToolCallRecord | None = None,
    ) -> AgentStream:
        """Start a run on ``message``; returns at once with the run's stream.

        ``propose_call``: the run's first step is this call instead of a model turn (a call
        that expired, asked again by its requester: SPEC 12); it goes through the one gate like
        any call the model makes, and the model goes on from its outcome. Its
        ``tool_call_id`` must be new in the thread.

        ``requested_by`` (who asked) is stored with every pending call of the run, in the same
        write as the snapshot; a ``decision_policy`` sees it. ``approval_ttl_seconds`` (also a
        ``default_options`` key) gives each pending approval an ``expires_at``: a decision
        after it raises ``ApprovalExpired``.

        With ``auto_resume_suspended_tools`` and a tool in this thread waiting for data, the
        message is first tried as that tool's resume data (see ``agents.memory``);
        ``suspended_runs``: this thread's ``list_suspended_runs(thread_id=...)`` when the caller
        has just read it (the bot does, once per thread reply), tried instead of reading it again.
        """
        return await start(
            self._runtime,
            message,
            thread_id=thread_id,
            resource_id=resource_id,
            require_tool_approval=require_tool_approval,
            max_steps=max_steps,
            request_context=request_context,
            auto_resume_suspended_tools=auto_resume_suspended_tools,
            decided_by=decided_by,
            requested_by=requested_by,
            approval_ttl_seconds=approval_ttl_seconds,
            suspended_runs=suspended_runs,
            propose_call=propose_call,
        )

    async def run_if_ungated(
        self,
        tool_name: str,
        args: dict[str, Any],
        *,
        requested_by: str | None = None,
        resource_id: str | None = None,
        request_context: Mapping[str, Any] | None = None,
    ) -> RanAtOnce | None:
        """Run one call of ``tool_name`` now when the gate holds nothing, storing no run;
        returns None when it would wait for a person (then ``stream`` it like any call).

        Asked exactly as a run's call is (the proposal gates with this agent's
        ``default_options``), run by the same executor (hooks, observers; a raise is an error
        result). For callers that forward one call and wait for its result (the gateway).
        """
        return await run_if_ungated(
            self._runtime,
            tool_name,
            args,
            requested_by=requested_by,
            resource_id=resource_id,
            request_context=request_context,
        )

    async def generate(self, message: str, **options: Any) -> RunResult:
        """Run to the end (or to the first suspension) and return the ``RunResult``.

        Raises the error that ended the run (e.g. ``ModelError``) instead of returning it.
        """
        return await finished(await self.stream(message, **options))

    # -- more time -------------------------------------------------------------------------
    async def extend_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        by: str | None = None,
        source: str = "python",
    ) -> PendingToolCall:
        """Keep a pending approval decidable for longer ("Extend", SPEC 12): its
        ``expires_at`` moves by its rule's ``ttl_seconds`` once more, never past
        ``max_ttl_seconds`` after it was presented; audited (``extended``). Returns the call
        as it now stands.

        Whoever may approve the call may extend it (the same authority check as a decision:
        ``NotAllowedToDecide``); a call decided or expired raises ``AlreadyDecided`` /
        ``ApprovalExpired``, and ``CannotExtend`` when its rule allows no (more) extension.
        Of extends racing from several instances, the rule's maximum holds for all of them.

        Example:
            >>> call = await agent.extend_tool_call(run_id=rid, tool_call_id="c1", by="U1")
            >>> call.expires_at
        """
        return await extend(
            self._runtime, run_id=run_id, tool_call_id=tool_call_id, by=by, source=source
        )

    # -- recovery --------------------------------------------------------------------------
    async def recover_interrupted_runs(self) -> list[AgentStream]:
        """Finish calls whose claim's owner died: any claim whose lease lapsed is taken over.

        Call it periodically on every instance (the bot does, every half lease): after a crash
        an ``idempotent=True`` tool is retried with the same ``idempotency_key``; any other is
        reported ``interrupted`` to the model, never silently re-run. Each claim is taken over
        by one instance only. Returns the streams of the runs it continued.
        """
        first = not self._recovered_once
        self._recovered_once = True
        return await recover_interrupted_runs(self._runtime, first=first)

    async def drain(self) -> None:
        """Wait for every run started in the background on this agent's runner."""
        await self._runtime.runner.drain()
