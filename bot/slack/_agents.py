"""``ServedAgents``: every agent the bot serves on one storage, as the edges see them.

The bot serves its agent (Slack conversations) and, with the gateway on, the gateway agent
(SPEC 17: a gateway call is a pending call like any other, agent id ``gateway``). The edges
(cards, clicks, modals, the Home tab, batches, grants, escalation, expiry, recovery) ask one
object for what they need; it answers with the agent that owns the run (a run never changes
agent: its stored ``agent_id``, cached), the agent named first in a call's ``agent_path``, or
every agent merged (listings newest first, grants). Conversations are the main agent's.

With one agent every call goes straight to it.

Example:
    >>> agents = ServedAgents(ops_agent, gateway_agent)  # doctest: +SKIP
    >>> call = await agents.pending_call(run_id=run_id, tool_call_id="mcp-call")  # doctest: +SKIP
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from agents import (
    Agent,
    AgentStream,
    Approve,
    Decision,
    DecisionRequest,
    Decline,
    Grant,
    PendingToolCall,
    RunResult,
    SuspendedRun,
    SuspendedRunsPage,
    Verdict,
)
from agents.models import Model
from agents.running._runner import Runner
from storage import DueKey, Storage
from tools import Tool

_HORIZON_DAYS = 400
"""How far ahead ``next_due_after`` looks (past the longest TTL, 30 days, and any step)."""

RUNS_REMEMBERED = 10_000
"""Run ids whose agent is kept in memory (a run never changes agent)."""

Seen = Callable[[PendingToolCall], None]
"""Told of every pending call an edge reads (the gateway learns the tools of calls it did not
propose itself: another instance's)."""


class ServedAgents:
    """The agents the bot serves, as one (see the module docstring)."""

    def __init__(self, main: Agent, *others: Agent, seen: Seen | None = None) -> None:
        self.main = main
        """The agent conversations in Slack talk to."""
        self.served: tuple[Agent, ...] = (main, *others)
        """Every agent, the main one first."""
        self._by_id = {agent.id: agent for agent in self.served}
        self._runs: OrderedDict[str, Agent] = OrderedDict()
        self._seen = seen

    # -- the main agent, for conversations -------------------------------------------------
    @property
    def id(self) -> str:
        return self.main.id

    @property
    def name(self) -> str:
        return self.main.name

    @property
    def instructions(self) -> str:
        return self.main.instructions

    @property
    def model(self) -> Model:
        return self.main.model

    @property
    def tools(self) -> dict[str, Tool]:
        return self.main.tools

    @property
    def storage(self) -> Storage:
        return self.main.storage

    @property
    def runner(self) -> Runner:
        return self.main.runner

    async def stream(self, message: str, **options: Any) -> AgentStream:
        """A conversation's turn: the main agent's run."""
        return await self.main.stream(message, **options)

    async def generate(self, message: str, **options: Any) -> RunResult:
        """The main agent's ``generate``."""
        return await self.main.generate(message, **options)

    # -- any agent's calls -----------------------------------------------------------------
    def get(self, agent_id: str) -> Agent | None:
        """The served agent with that id."""
        return self._by_id.get(agent_id)

    async def agent_of(self, run_id: str) -> Agent:
        """The agent whose run ``run_id`` is (the main one for a run no longer stored: its
        decisions are remembered by run id, whoever asks)."""
        if len(self.served) == 1:
            return self.main
        known = self._runs.get(run_id)
        if known is not None:
            self._runs.move_to_end(run_id)
            return known
        record = await self.main.storage.load_snapshot(run_id)
        agent = self._by_id.get(record.agent_id) if record is not None else None
        if agent is None:
            return self.main
        self._runs[run_id] = agent
        if len(self._runs) > RUNS_REMEMBERED:
            self._runs.popitem(last=False)
        return agent

    def tool_for(self, pending: PendingToolCall) -> Tool | None:
        """The tool a pending call will run (its agent is the first of its ``agent_path``)."""
        top = pending.agent_path[0] if pending.agent_path else self.main.id
        return (self._by_id.get(top) or self.main).tool_for(pending)

    async def pending_call(self, *, run_id: str, tool_call_id: str) -> PendingToolCall | None:
        agent = await self.agent_of(run_id)
        call = await agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
        if call is not None:
            self._saw(call)
        return call

    async def ask(
        self, decision: Decision, *, call: PendingToolCall, run_id: str, decided_by: str | None
    ) -> Verdict:
        """The gate's answer about ``decision`` on ``call`` by ``decided_by`` (the agent of the
        call's ``agent_path``: nothing is read)."""
        top = call.agent_path[0] if call.agent_path else self.main.id
        agent = self._by_id.get(top) or self.main
        return await agent.ask(decision, call=call, run_id=run_id, decided_by=decided_by)

    async def decide(self, decision: Decision, *, run_id: str, **options: Any) -> AgentStream:
        agent = await self.agent_of(run_id)
        return await agent.decide(decision, run_id=run_id, **options)

    async def extend_tool_call(
        self, *, run_id: str, tool_call_id: str, by: str | None, source: str
    ) -> PendingToolCall:
        """``Agent.extend_tool_call`` on the agent of ``run_id``."""
        agent = await self.agent_of(run_id)
        return await agent.extend_tool_call(
            run_id=run_id, tool_call_id=tool_call_id, by=by, source=source
        )

    async def decide_request(self, request: DecisionRequest, decision: Decision) -> AgentStream:
        agent = await self.agent_of(request.run_id)
        return await agent.decide_request(request, decision)

    async def decide_many(
        self, *, run_id: str, decisions: Mapping[str, Approve | Decline], **options: Any
    ) -> AgentStream:
        agent = await self.agent_of(run_id)
        return await agent.decide_many(run_id=run_id, decisions=decisions, **options)

    async def escalate_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str,
        step: int,
        approvers: Sequence[str] = (),
        notify: Sequence[str] = (),
        at: datetime,
    ) -> PendingToolCall | None:
        agent = await self.agent_of(run_id)
        return await agent.escalate_tool_call(
            run_id=run_id,
            tool_call_id=tool_call_id,
            step=step,
            approvers=approvers,
            notify=notify,
            at=at,
        )

    async def revoke_grant(self, grant_id: str, *, revoked_by: str | None = None) -> Grant:
        record = await self.main.storage.get_grant(grant_id)
        agent = self._by_id.get(record.agent_id) if record is not None else None
        return await (agent or self.main).revoke_grant(grant_id, revoked_by=revoked_by)

    # -- every agent -----------------------------------------------------------------------
    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int | None = None,
        per_page: int | None = None,
    ) -> SuspendedRunsPage:
        """Every agent's runs waiting for a decision, newest first (paged as one list)."""
        if len(self.served) == 1:
            return await self.main.list_suspended_runs(
                thread_id=thread_id, resource_id=resource_id, page=page, per_page=per_page
            )
        first, upto = 0, None
        if page is not None and per_page is not None:  # the first ``upto`` of each, merged
            first, upto = page * per_page, (page + 1) * per_page
        runs: list[SuspendedRun] = []
        total = 0
        for agent in self.served:
            listed = await agent.list_suspended_runs(
                thread_id=thread_id,
                resource_id=resource_id,
                page=page if upto is None else 0,
                per_page=per_page if upto is None else upto,
            )
            runs.extend(listed.runs)
            total += listed.total
        runs.sort(key=lambda run: run.suspended_at, reverse=True)  # stable: main first on ties
        shown = runs[first:upto]
        for run in shown:
            for call in run.tool_calls:
                self._saw(call)
        return SuspendedRunsPage(runs=shown, total=total)

    async def every_due_run(
        self, until: datetime, per_page: int = 100
    ) -> AsyncIterator[SuspendedRun]:
        """Every run with something due by ``until``, agent by agent, a page at a time by key
        (storage's due index: a run not due is never read, no page costs an offset or a count;
        nothing is kept once yielded)."""
        for agent in self.served:
            after: DueKey | None = None
            while True:
                batch = await agent.list_due_runs(until=until, after=after, limit=per_page)
                for run in batch:
                    for call in run.tool_calls:
                        self._saw(call)
                    yield run
                if len(batch) < per_page or batch[-1].due_at is None:
                    break
                after = (batch[-1].due_at, batch[-1].run_id)

    async def next_due_after(self, moment: datetime) -> datetime | None:
        """The earliest stored due moment after ``moment`` among every agent's runs (one run
        read per agent), None when nothing is due later."""
        after = (moment + timedelta(microseconds=1), "")
        until = moment + timedelta(days=_HORIZON_DAYS)
        found = [
            run.due_at
            for agent in self.served
            for run in await agent.list_due_runs(until=until, after=after, limit=1)
            if run.due_at is not None
        ]
        return min(found, default=None)

    async def reschedule_run(self, run: SuspendedRun, due_at: datetime | None) -> bool:
        """Store when ``run`` is next due, unless it was saved again since it was read."""
        agent = self._by_id.get(run.agent_id, self.main)
        return await agent.reschedule_run(run_id=run.run_id, version=run.version, due_at=due_at)

    async def list_grants(
        self,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
        *,
        active_only: bool = True,
    ) -> list[Grant]:
        """Every agent's standing grants, newest first."""
        grants: list[Grant] = []
        for agent in self.served:
            grants.extend(
                await agent.list_grants(thread_id, resource_id, granted_by, active_only=active_only)
            )
        if len(self.served) > 1:
            grants.sort(key=lambda grant: grant.created_at, reverse=True)
        return grants

    async def count_grants(self) -> int:
        """Every agent's standing grants usable now (``Agent.count_grants``)."""
        return sum([await agent.count_grants() for agent in self.served])

    async def recover_interrupted_runs(self) -> list[AgentStream]:
        """Every agent's crash recovery (``Agent.recover_interrupted_runs``)."""
        streams: list[AgentStream] = []
        for agent in self.served:
            streams.extend(await agent.recover_interrupted_runs())
        return streams

    async def drain(self) -> None:
        """Wait for every agent's background runs."""
        for agent in self.served:
            await agent.drain()

    def _saw(self, call: PendingToolCall) -> None:
        if self._seen is not None and call.agent_path[:1] != [self.main.id]:
            self._seen(call)
