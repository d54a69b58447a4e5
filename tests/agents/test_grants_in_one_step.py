"""Several calls of one model step that standing grants approve (SPEC 3.3 "One gate", 15): each
is written once, as decided, in the one transaction that stores the step's snapshot; storage
never shows one of them pending, on every backend."""

from __future__ import annotations

from typing import Any

from agents import Agent, Approve, GrantRequest, ToolCallGrantedChunk
from agents.models import ScriptedModel, call, calls, reply
from agents.running._chunks import Chunk
from storage import StateChange, Storage, utcnow
from tests.agents.test_grants import Deploys
from tests.backends import storage, storage_url  # noqa: F401


class Watched:
    """``inner`` storage that, after each commit storing a snapshot, asks the agent which of
    the step's calls (``a``, ``b``, ``c``) storage shows pending (the public read a card
    uses)."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.agent: Agent | None = None
        self.seen_pending: list[tuple[str, str]] = []
        """``(run_id, tool_call_id)`` of every call of the step seen pending after a commit."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def commit(self, change: StateChange) -> Any:
        existing = await self.inner.commit(change)
        if change.snapshot is not None and self.agent is not None:
            run_id = change.snapshot.run_id
            for call_id in "abc":
                if await self.agent.pending_call(run_id=run_id, tool_call_id=call_id):
                    self.seen_pending.append((run_id, call_id))
        return existing


def _step(calls_in_step: int) -> ScriptedModel:
    """A first call (``d0``, approved with a grant), then one step of calls ``a``, ``b``...
    (versions 1, 2...) that the grant's pins match."""
    step = [
        call("deploy", {"service": "api", "version": str(n + 1)}, id="abc"[n])
        for n in range(calls_in_step)
    ]
    return ScriptedModel(
        [
            call("deploy", {"service": "api", "version": "0"}, id="d0"),
            reply("deployed"),
            calls(*step),
            reply("done"),
        ]
    )


async def _agent_with_grant(
    store: Storage,
    model: ScriptedModel,
    max_uses: int,
    *,
    grants: int = 1,
    deploys: Deploys | None = None,
) -> Agent:
    """An agent whose first ``grants`` runs' calls are approved by U1 with a grant each."""
    tool = (deploys or Deploys()).tool()
    agent = Agent(id="ops", model=model, tools=[tool], storage=store)
    for _ in range(grants):
        first = await agent.generate("deploy", thread_id="T1", resource_id="C1", requested_by="U9")
        request = GrantRequest(seconds=3600, max_uses=max_uses, free_args=("version",))
        stream = await agent.decide(Approve(grant=request), run_id=first.run_id, decided_by="U1")
        assert (await stream.result()).finish_reason == "stop"
    return agent


async def _the_step(watched: Watched, agent: Agent) -> list[Chunk]:
    """Watch ``agent``'s writes from now on and run the step; its chunks."""
    watched.agent = agent
    stream = await agent.stream("deploy them", thread_id="T1", resource_id="C1", requested_by="U9")
    return [c async for c in stream.full_stream]


async def test_two_calls_one_grant_approves_are_never_stored_pending(
    storage: Storage,  # noqa: F811
) -> None:
    watched = Watched(storage)
    agent = await _agent_with_grant(watched, _step(2), max_uses=5)

    chunks = await _the_step(watched, agent)

    assert watched.seen_pending == []
    granted = [c for c in chunks if isinstance(c, ToolCallGrantedChunk)]
    assert [(c.tool_call_id, c.uses) for c in granted] == [("a", 1), ("b", 2)]
    assert "tool-call-approval" not in [c.type for c in chunks]
    assert chunks[-1].payload["finish_reason"] == "stop"
    [grant] = await agent.list_grants(thread_id="T1")
    assert grant.uses == 2


async def test_a_grant_with_two_uses_left_approves_two_of_three_calls_and_the_third_waits(
    storage: Storage,  # noqa: F811
) -> None:
    watched = Watched(storage)
    agent = await _agent_with_grant(watched, _step(3), max_uses=2)

    chunks = await _the_step(watched, agent)

    granted = [c for c in chunks if isinstance(c, ToolCallGrantedChunk)]
    assert [(c.tool_call_id, c.uses, c.max_uses) for c in granted] == [("a", 1, 2), ("b", 2, 2)]
    waiting = [c.payload["tool_call_id"] for c in chunks if c.type == "tool-call-approval"]
    assert waiting == ["c"]
    assert {call_id for _, call_id in watched.seen_pending} == {"c"}  # no grant approved it
    [spent] = await agent.list_grants(thread_id="T1", active_only=False)
    assert spent.uses == 2


class RevokedMeanwhile(Watched):
    """``Watched``, where another instance revokes grant ``doomed`` just before the next
    write that takes a claim (once it is set: the write that stores the step's granted calls)."""

    doomed: str | None = None

    async def commit(self, change: StateChange) -> Any:
        if self.doomed and change.claim is not None:
            await self.inner.revoke_grant(self.doomed, revoked_by="U1", at=utcnow())
            self.doomed = None
        return await super().commit(change)


async def test_a_grant_revoked_meanwhile_approves_none_of_its_calls_and_the_others_still_run(
    storage: Storage,  # noqa: F811
) -> None:
    watched, deploys = RevokedMeanwhile(storage), Deploys()
    agent = await _agent_with_grant(watched, _two_services(), 5, grants=2, deploys=deploys)
    api_grant = next(g for g in await agent.list_grants() if g.pins == {"service": "api"})
    watched.doomed = api_grant.grant_id

    chunks = await _the_step(watched, agent)

    granted = [(c.tool_call_id, c.uses) for c in chunks if isinstance(c, ToolCallGrantedChunk)]
    assert granted == [("b", 1)]
    assert [c.payload["tool_call_id"] for c in chunks if c.type == "tool-call-approval"] == ["a"]
    assert {call_id for _, call_id in watched.seen_pending} == {"a"}
    assert [d["service"] for d in deploys.done] == ["api", "web", "web"]


def _two_services() -> ScriptedModel:
    """A call of ``api``, one of ``web`` (each approved with a grant), then one step of two
    calls, ``a`` of ``api`` and ``b`` of ``web``."""
    return ScriptedModel(
        [
            call("deploy", {"service": "api", "version": "0"}, id="d0"),
            reply("deployed"),
            call("deploy", {"service": "web", "version": "0"}, id="d1"),
            reply("deployed"),
            calls(
                call("deploy", {"service": "api", "version": "1"}, id="a"),
                call("deploy", {"service": "web", "version": "1"}, id="b"),
            ),
            reply("done"),
        ]
    )
