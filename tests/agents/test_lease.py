"""A decided call's claim stays its owner's while the tool runs: the lease is renewed every
third of its length, through a failing renewal, and renewal stops when the tool ends."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage, StorageUnavailable
from tools import ToolContext, create_tool


class SlowInput(BaseModel):
    id: str


class FlakyRenewals(InMemoryStorage):
    """Refuses the first lease renewal as an unreachable server would."""

    def __init__(self) -> None:
        super().__init__()
        self.refused = 0

    async def renew_lease(
        self, run_id: str, key: str, owner: str, lease_until: datetime, *, epoch: int = 0
    ) -> bool:
        if not self.refused:
            self.refused += 1
            raise StorageUnavailable("fake://", ConnectionError("down"))
        return await super().renew_lease(run_id, key, owner, lease_until, epoch=epoch)


async def _run_slow_tool(store: InMemoryStorage) -> list[datetime | None]:
    """Approve a tool that runs for ~1.2 s under a 1 s lease; its claim's lease as it ran."""
    seen: list[datetime | None] = []

    async def slow(input: SlowInput, ctx: ToolContext) -> dict[str, bool]:
        for _ in range(3):
            [claim] = await store.list_claims(ctx.run_id)
            seen.append(claim.lease_until)
            await asyncio.sleep(0.6)
        return {"ok": True}

    agent = Agent(
        id="a",
        model=ScriptedModel([call("slow", {"id": "1"}), reply("done")]),
        tools=[
            create_tool(
                id="slow",
                description="slow",
                input_schema=SlowInput,
                execute=slow,
                require_approval=True,
            )
        ],
        storage=store,
        claim_lease_seconds=1,
    )
    first = await agent.generate("go")
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.finish_reason == "stop"
    return seen


async def test_a_running_tool_keeps_its_claim_and_renewal_stops_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen = await _run_slow_tool(InMemoryStorage())
    assert None not in seen
    assert seen == sorted(seen) and len(set(seen)) == 3
    await asyncio.sleep(0.5)  # a renewal still scheduled would find the claim completed
    assert "taken over" not in caplog.text


async def test_a_failed_renewal_is_retried_at_the_next_period(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FlakyRenewals()
    seen = await _run_slow_tool(store)
    assert store.refused == 1
    assert "could not renew the claim" in caplog.text
    assert seen[2] is not None and seen[1] is not None and seen[2] > seen[1]
