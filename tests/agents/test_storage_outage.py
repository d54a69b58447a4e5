"""A storage outage while a tool runs loses nothing: the outcome is written once storage is back.

The test runs its OWN redis-server (append-only file, so a restart keeps the data) on a free
loopback port and stops it by its pid from inside the tool; the shared services are untouched.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent
from agents.memory import Memory
from agents.models import ModelRequest, ScriptedModel, ScriptItem, call, reply
from storage import RedisStorage, StorageUnavailable
from tests.own_servers import OwnRedis
from tools import ToolContext, create_tool

pytestmark = [
    pytest.mark.processes,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    await server.start()
    try:
        yield server
    finally:
        server.stop()


class Target(BaseModel):
    id: str


async def test_an_unreachable_server_is_reported_as_storage_unavailable(
    own_redis: OwnRedis,
) -> None:
    store = RedisStorage.from_url(own_redis.url)
    try:
        assert await store.add_if_absent("k", "v", 60)
        own_redis.stop()
        with pytest.raises(StorageUnavailable) as info:
            await store.get_value("k")
        assert f"127.0.0.1:{own_redis.port}" in str(info.value)
    finally:
        await store.close()


async def test_a_tool_that_finishes_during_an_outage_keeps_its_outcome(
    own_redis: OwnRedis,
) -> None:
    ran: list[str] = []
    restarted: list[asyncio.Task[None]] = []

    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        own_redis.stop()  # storage goes down while the tool runs ...
        ran.append(input.id)

        async def back_later() -> None:
            await asyncio.sleep(0.5)
            await own_redis.start()  # ... and comes back after it finished

        restarted.append(asyncio.create_task(back_later()))
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        description="Delete",
        input_schema=Target,
        execute=delete,
        require_approval=True,
    )
    store = RedisStorage.from_url(own_redis.url)
    make: Callable[[list[Any]], Agent] = lambda script: Agent(  # noqa: E731
        id="ops", model=ScriptedModel(script), tools=[tool], storage=store
    )
    try:
        first = await make([call("delete-record", {"id": "42"}, id="c1")]).generate("delete 42")
        done = await make([reply("Deleted 42.")]).approve_tool_call_generate(
            run_id=first.run_id, decided_by="U2"
        )
        assert done.finish_reason == "stop" and done.text == "Deleted 42."
        assert ran == ["42"]
        snapshot, claims, _ = await store.load_run(first.run_id)
        assert snapshot is None
        [claim] = claims
        assert claim.status == "completed" and claim.outcome is not None
        assert claim.outcome.get("result") == {"deleted": "42"}
        executed = [e for e in await store.query_audit(run_id=first.run_id) if e.kind == "executed"]
        assert len(executed) == 1
    finally:
        for task in restarted:
            await task
        await store.close()


async def test_storage_down_while_the_model_answers_a_decided_call_keeps_the_answer(
    own_redis: OwnRedis,
) -> None:
    """Found by the chaos test: storage went down after a decided call's outcome was stored,
    while the model turn after it ran; the run failed ("storage could not be reached") and the
    thread never got the call's outcome. Once a call is decided the rest of the run waits out
    an outage like the outcome does."""
    restarted: list[asyncio.Task[None]] = []

    async def delete(input: Target, ctx: ToolContext) -> dict[str, Any]:
        return {"deleted": input.id}

    def answer(request: ModelRequest) -> ScriptItem:
        own_redis.stop()  # storage goes down while the model answers ...

        async def back_later() -> None:
            await asyncio.sleep(0.5)
            await own_redis.start()  # ... and comes back soon after

        restarted.append(asyncio.create_task(back_later()))
        return reply("Deleted 42.")

    tool = create_tool(
        id="delete-record",
        description="Delete",
        input_schema=Target,
        execute=delete,
        require_approval=True,
    )
    store = RedisStorage.from_url(own_redis.url)
    make: Callable[[list[Any]], Agent] = lambda script: Agent(  # noqa: E731
        id="ops",
        model=ScriptedModel(script),
        tools=[tool],
        storage=store,
        memory=Memory(storage=store),
    )
    try:
        first = await make([call("delete-record", {"id": "42"}, id="c1")]).generate(
            "delete 42", thread_id="t1", resource_id="u1"
        )
        done = await make([answer]).approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
        assert done.finish_reason == "stop" and done.text == "Deleted 42."
        assert restarted, "the model turn ran"
        await restarted[0]
        try:
            messages = await store.list_messages("t1")
        except StorageUnavailable:  # a connection of before the restart: the next one is new
            messages = await store.list_messages("t1")
        stored = [m.content for m in messages]
        assert {"role": "assistant", "content": "Deleted 42."} in stored
    finally:
        for task in restarted:
            await task
        await store.close()
