# mypy: ignore-errors
# (runs in .venv-peers; its imports are not installed where mypy runs)
"""Pydantic AI: suspend → persist → restart → approve → finish, timed like ``bench cycle``.

Run by ``python -m bench peers`` with the peers' virtual environment's python; prints one JSON
line.

The shape is Pydantic AI's documented human-in-the-loop flow (``docs/deferred-tools.md``, "end
the run" rather than an in-process handler, since the approver is a person clicking later):

1. An ``Agent`` with ``output_type=[str, DeferredToolRequests]`` and the tool registered with
   ``Tool(delete_record, requires_approval=True)``; ``agent.run(prompt)`` with a scripted
   ``FunctionModel`` that returns one ``delete_record`` tool call ends with a
   ``DeferredToolRequests`` output holding that call in ``approvals``.
2. Persist: ``result.all_messages_json()`` saved in the store (a dict, or one row of a SQLite
   table on its own aiosqlite connection with countersign's pragmas: WAL, synchronous NORMAL;
   see ``_peer_states``).
3. Restart: a fresh ``Agent`` (fresh scripted model that answers "Deleted."), the history loaded
   back with ``ModelMessagesTypeAdapter.validate_json``; the pending call ids are read from the
   loaded history (its last response's tool calls), as a restarted process would.
4. ``agent.run(message_history=..., deferred_tool_results=DeferredToolResults(approvals={id:
   True}))``: the tool runs and the model answers. The stored history is deleted (countersign
   deletes its snapshot too).

Fair to all: no network (``FunctionModel`` is async and in-process, like countersign's
``ScriptedModel``; it ignores the tool schemas), no instrumentation, the same prompt, tool and
answer, a new agent object for each half, the same storage class as countersign's, and
``state_bytes`` = the length of the stored JSON. Like the other peers, it stores no separate
decision or audit record, so countersign's cycle does more storage work per cycle. The raw-store
floor is measured in this process with the same code as everyone's (``_peer_timing``).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import _peer_timing as timing
from _peer_states import open_states
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


async def delete_record(id: str) -> dict[str, Any]:
    """Delete a record by ID."""
    return {"deleted": id}


def _agent(response: ModelResponse) -> Agent[None, str | DeferredToolRequests]:
    async def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return response

    return Agent(
        FunctionModel(scripted),
        instructions="You run operations.",
        output_type=[str, DeferredToolRequests],
        tools=[Tool(delete_record, requires_approval=True)],
    )


def _pending_call_ids(messages: list[ModelMessage]) -> list[str]:
    last = messages[-1]
    if not isinstance(last, ModelResponse):
        raise RuntimeError(f"stored history ends with {type(last).__name__}, not a response")
    return [part.tool_call_id for part in last.parts if isinstance(part, ToolCallPart)]


async def main() -> None:
    args = timing.parse_args("pydantic-ai")
    store = await open_states(args.storage, args.path)

    async def one_cycle(n: int) -> tuple[float, int]:
        run_id = f"bench-{n}-{id(store)}"
        call = ToolCallPart("delete_record", {"id": f"rec-{n}"}, tool_call_id=f"c{n}")
        started = timing.time.perf_counter()
        first = _agent(ModelResponse(parts=[call]))
        result = await first.run(f"Delete record rec-{n}")
        if not isinstance(result.output, DeferredToolRequests) or len(result.output.approvals) != 1:
            raise RuntimeError(f"cycle {n}: expected one approval request, got {result.output!r}")
        text = result.all_messages_json().decode()
        await store.save(run_id, text)
        restarted = _agent(ModelResponse(parts=[TextPart("Deleted.")]))
        history = ModelMessagesTypeAdapter.validate_json(await store.load(run_id))
        approvals = {call_id: True for call_id in _pending_call_ids(history)}
        done = await restarted.run(
            message_history=history, deferred_tool_results=DeferredToolResults(approvals=approvals)
        )
        await store.delete(run_id)
        elapsed = timing.time.perf_counter() - started
        if done.output != "Deleted.":
            raise RuntimeError(f"cycle {n} ended with {done.output!r}, expected 'Deleted.'")
        return elapsed, len(text.encode())

    floor = timing.open_raw_store(args.storage, args.path)
    try:
        figure = await timing.time_cycles(one_cycle, args.cycles, args.warmup, floor)
    finally:
        await floor.close()
        await store.close()
    timing.report("pydantic-ai", version("pydantic-ai-slim"), args.storage, figure)


if __name__ == "__main__":
    timing.run(main)
