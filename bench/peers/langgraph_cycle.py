# mypy: ignore-errors
# (runs in .venv-peers; its imports are not installed where mypy runs)
"""LangGraph: suspend → persist → restart → approve → finish, timed like ``bench cycle``.

Run by ``python -m bench peers`` with the peers' virtual environment's python; prints one JSON
line.

The shape is the one LangChain documents for approving an agent's tool calls
(``HumanInTheLoopMiddleware``, itself a LangGraph ``interrupt``):

1. ``create_agent(model, tools=[delete_record], middleware=[HumanInTheLoopMiddleware(
   interrupt_on={"delete_record": ...})], checkpointer=...)``; ``ainvoke`` with a scripted chat
   model (``GenericFakeChatModel`` that returns one ``delete_record`` tool call) stops with one
   interrupt. The checkpointer has persisted the thread by then.
2. Restart: a freshly built agent (fresh scripted model answering "Deleted.") on the same
   checkpointer: ``InMemorySaver`` (one object, like countersign's ``memory://`` store object) or
   ``AsyncSqliteSaver`` on an aiosqlite connection with countersign's pragmas (WAL, synchronous
   NORMAL; LangGraph itself sets WAL only).
3. ``ainvoke(Command(resume={"decisions": [{"type": "approve"}]}))``: the tool runs and the
   model answers.

Fair to both: no network; the scripted model is async-native (``_agenerate`` does not hop to a
thread) and ignores the tool schemas like countersign's ``ScriptedModel``; same prompt, tool and
answer; a new agent object for each half (as countersign builds a new ``Agent``).
``state_bytes`` = the serialized latest checkpoint plus its pending writes (what a resume reads),
``thread_bytes`` = every checkpoint and write kept for the thread (LangGraph keeps the history of
a finished thread: it is also the conversation memory; countersign deletes the snapshot, so no
delete is timed here). Sizes are measured once, on the first timed cycle, untimed.
The storage class is countersign's (in-memory, or a SQLite file), and the raw-store floor
(``ratio_to_floor``) is measured in this process, after each cycle, with the same code as
everyone's (``_peer_timing``).
"""

from __future__ import annotations

import time
from importlib.metadata import version
from typing import Any

import _peer_timing as timing
import aiosqlite
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command


class ScriptedChatModel(GenericFakeChatModel):
    """Plays its messages in order; tool schemas are accepted and ignored."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop=stop, **kwargs)


@tool
async def delete_record(id: str) -> dict[str, Any]:
    """Delete a record by ID."""
    return {"deleted": id}


def _agent(saver: BaseCheckpointSaver[Any], messages: list[AIMessage]) -> Any:
    return create_agent(
        ScriptedChatModel(messages=iter(messages)),
        tools=[delete_record],
        system_prompt="You run operations.",
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"delete_record": {"allowed_decisions": ["approve", "reject"]}}
            )
        ],
        checkpointer=saver,
    )


def _size(saver: BaseCheckpointSaver[Any], value: Any) -> int:
    return len(saver.serde.dumps_typed(value)[1])


async def _sizes(saver: BaseCheckpointSaver[Any], config: dict[str, Any]) -> tuple[int, int]:
    """(latest checkpoint + its pending writes, every checkpoint and write of the thread)."""
    tuples = [t async for t in saver.alist(config)]
    sizes = [
        _size(saver, t.checkpoint)
        + _size(saver, t.metadata)
        + sum(_size(saver, w[2]) for w in t.pending_writes or [])
        for t in tuples
    ]
    return (sizes[0] if sizes else 0), sum(sizes)


async def main() -> None:
    args = timing.parse_args("langgraph")
    conn: aiosqlite.Connection | None = None
    saver: BaseCheckpointSaver[Any]
    if args.storage == "memory":
        saver = InMemorySaver()
    else:
        conn = await aiosqlite.connect(args.path)
        for pragma in timing.SQLITE_PRAGMAS:
            await conn.execute(pragma)
        saver = AsyncSqliteSaver(conn)
    sizes: list[int] = []
    prefix = f"bench-{time.time_ns()}"

    async def one_cycle(n: int) -> tuple[float, int]:
        config: dict[str, Any] = {"configurable": {"thread_id": f"{prefix}-{n}"}}
        call = {"name": "delete_record", "args": {"id": f"rec-{n}"}, "id": f"c{n}"}
        started = time.perf_counter()
        first = _agent(saver, [AIMessage(content="", tool_calls=[call])])
        prompt = {"messages": [{"role": "user", "content": f"Delete record rec-{n}"}]}
        result = await first.ainvoke(prompt, config, version="v2")
        paused = time.perf_counter()
        if len(result.interrupts) != 1:
            raise RuntimeError(f"cycle {n}: expected one interrupt, got {result.interrupts}")
        if n == 0:  # sizes are the same every cycle: measure once, untimed
            state_bytes, all_bytes = await _sizes(saver, config)
            sizes.extend((state_bytes, all_bytes))
        resumed = time.perf_counter()
        restarted = _agent(saver, [AIMessage(content="Deleted.")])
        decision = Command(resume={"decisions": [{"type": "approve"}]})
        done = await restarted.ainvoke(decision, config, version="v2")
        elapsed = (paused - started) + (time.perf_counter() - resumed)
        messages = done.value["messages"]
        if messages[-1].content != "Deleted." or messages[-2].type != "tool":
            raise RuntimeError(f"cycle {n} ended with {messages[-2:]!r}")
        return elapsed, sizes[0] if sizes else 0

    floor = timing.open_raw_store(args.storage, args.path)
    try:
        figure = await timing.time_cycles(one_cycle, args.cycles, args.warmup, floor)
    finally:
        await floor.close()
        if conn is not None:
            await conn.close()
    figure["thread_bytes"] = sizes[1] if sizes else 0
    timing.report("langgraph", version("langgraph"), args.storage, figure)


if __name__ == "__main__":
    timing.run(main)
