# mypy: ignore-errors
# (runs in .venv-peers; its imports are not installed where mypy runs)
"""OpenAI Agents SDK: suspend → persist → restart → approve → finish, timed like ``bench cycle``.

Run by ``python -m bench peers`` with the peers' virtual environment's python (its import name
``agents`` clashes with countersign's); prints one JSON line.

The shape is the SDK's documented human-in-the-loop flow (``docs/human_in_the_loop.md``):

1. ``Runner.run(agent, prompt)`` with the SDK's own deterministic ``agents.testing.ScriptedModel``
   that returns one ``delete_record`` function call; the tool is
   ``@function_tool(needs_approval=True)``, so the run stops with ``result.interruptions``.
2. Persist: ``result.to_state().to_string()`` saved in the store (a dict, or one row of a SQLite
   table on its own aiosqlite connection with countersign's pragmas: WAL, synchronous NORMAL).
3. Restart: a fresh ``Agent`` (fresh scripted model that answers "Deleted."), the string loaded
   back, ``RunState.from_string(agent, text)``.
4. ``state.approve(item)`` for the interruption, ``Runner.run(agent, state)``: the tool runs and
   the model answers. The stored state is deleted (countersign deletes its snapshot too).

Fair to both: no network, tracing off (``set_tracing_disabled``: countersign has no tracing), the
same prompt, tool and answer, a new agent object for each half, and ``state_bytes`` = the length
of the stored string (countersign reports its snapshot JSON). countersign's cycle does more
storage work per cycle (atomic claim, decision and audit records), so the ratio is conservative.
The storage class is countersign's (in-memory, or a SQLite file), and the raw-store floor
(``ratio_to_floor``) is measured in this process, after each cycle, with the same code as
everyone's (``_peer_timing``).
"""

# ruff: noqa: I001  (this `agents` is the OpenAI Agents SDK; ruff takes it for ours)
from __future__ import annotations

from importlib.metadata import version
from typing import Any

import _peer_timing as timing
from _peer_states import open_states
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.run_state import RunState
from agents.testing import ScriptedModel, assistant_message, function_call


@function_tool(needs_approval=True)
async def delete_record(id: str) -> dict[str, Any]:
    """Delete a record by ID."""
    return {"deleted": id}


def _agent(steps: list[Any]) -> Agent[Any]:
    return Agent(
        name="ops",
        instructions="You run operations.",
        model=ScriptedModel(steps),
        tools=[delete_record],
    )


async def main() -> None:
    args = timing.parse_args("openai-agents")
    set_tracing_disabled(True)
    store = await open_states(args.storage, args.path)

    async def one_cycle(n: int) -> tuple[float, int]:
        run_id = f"bench-{n}-{id(store)}"
        started = timing.time.perf_counter()
        first = _agent([[function_call("delete_record", {"id": f"rec-{n}"}, call_id=f"c{n}")]])
        result = await Runner.run(first, f"Delete record rec-{n}")
        if len(result.interruptions) != 1:
            raise RuntimeError(f"cycle {n}: expected one interruption, got {result.interruptions}")
        text = result.to_state().to_string()
        await store.save(run_id, text)
        restarted = _agent([[assistant_message("Deleted.")]])
        state = await RunState.from_string(restarted, await store.load(run_id))
        for item in state.get_interruptions():
            state.approve(item)
        done = await Runner.run(restarted, state)
        await store.delete(run_id)
        elapsed = timing.time.perf_counter() - started
        if done.final_output != "Deleted.":
            raise RuntimeError(f"cycle {n} ended with {done.final_output!r}, expected 'Deleted.'")
        return elapsed, len(text.encode())

    floor = timing.open_raw_store(args.storage, args.path)
    try:
        figure = await timing.time_cycles(one_cycle, args.cycles, args.warmup, floor)
    finally:
        await floor.close()
        await store.close()
    timing.report("openai-agents", version("openai-agents"), args.storage, figure)


if __name__ == "__main__":
    timing.run(main)
