"""A run that stops on a model error keeps what it did and can be retried (issue 5)."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agents import AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended
from agents.errors import ModelError
from agents.models import ModelRequest, ScriptedModel, call, reply
from storage import InMemoryStorage
from tests.agents.conftest import Executions
from tools import Tool


def _provider_down(request: ModelRequest) -> Any:
    raise ModelError("provider unavailable", status=503, request_id="req_1")


async def test_a_model_failure_after_an_approved_tool_loses_nothing_and_can_be_retried(
    store: InMemoryStorage, make_tool: Callable[..., Tool], executions: Executions
) -> None:
    from agents import Agent

    model = ScriptedModel(
        [call("delete-record", {"id": "42"}), _provider_down, reply("Deleted 42.")]
    )
    agent = Agent(id="ops", model=model, tools=[make_tool(require_approval=True)], storage=store)
    first = await agent.generate("delete 42")
    stream = await agent.approve_tool_call(run_id=first.run_id)
    failed = await stream.result()
    assert failed.finish_reason == "error"
    assert isinstance(failed.error, ModelError) and failed.error.status == 503
    # Nothing is left to decide, so it is not listed (SPEC 3.3); it is kept for retry_run.
    assert (await agent.list_suspended_runs()).total == 0
    kept = await store.load_snapshot(first.run_id)
    assert kept is not None and "provider unavailable" in kept.data["error"]

    retries = await asyncio.gather(
        agent.retry_run(run_id=first.run_id),
        agent.retry_run(run_id=first.run_id),
        return_exceptions=True,
    )
    assert sum(isinstance(r, AlreadyDecided) for r in retries) == 1
    winner = next(r for r in retries if not isinstance(r, BaseException))
    done = await winner.result()  # type: ignore[union-attr]
    assert done.text == "Deleted 42."
    assert executions.of("delete-record") == [{"id": "42"}]  # the tool did not run again
    tool_messages = [m for m in model.requests[-1].messages if m.role == "tool"]
    assert len(tool_messages) == 1
    with pytest.raises(SnapshotNotFound):
        await agent.retry_run(run_id="unknown")


async def test_only_a_failed_run_can_be_retried(
    store: InMemoryStorage, make_tool: Callable[..., Tool]
) -> None:
    from agents import Agent

    agent = Agent(
        id="ops",
        model=ScriptedModel([call("delete-record", {"id": "1"})]),
        tools=[make_tool(require_approval=True)],
        storage=store,
    )
    first = await agent.generate("delete 1")
    with pytest.raises(ToolCallNotSuspended, match="did not fail"):
        await agent.retry_run(run_id=first.run_id)
