"""A separate OS process for restart, race and crash tests (``-m tests.agents.process_worker``).

Each invocation builds a NEW agent over the storage URL (as a restarted bot would), does one
thing, prints one JSON line, and exits. Tool executions are appended to ``$EXEC_LOG`` so the
parent test can count them across processes, and so are the model's answers after a decided
call (``model``), to count how often the model was told an outcome.

    start URL [supervisor]          run until the approval; prints run_id and pending
    list URL                        list_suspended_runs
    approve URL RUN_ID CALL_ID WHO  approve (waits for ``$GO_FILE`` first when set; the tool
                                    logs ``started`` and waits for ``$BLOCK_UNTIL`` when set)
    decline URL RUN_ID CALL_ID      decline with a reason
    hang URL RUN_ID                 approve a call whose tool hangs after it started (to be killed)
    recover URL                     recover_interrupted_runs(), retried until it finds a run
                                    whose claim's lease lapsed when ``$WAIT`` is set

Every agent's claims use a lease of ``$LEASE`` seconds (default 30): the claim of a killed
process can be taken over once it lapses.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent, AgentError
from agents.models import ScriptedModel, call, reply
from storage import create_storage
from tools import ToolContext, create_tool


class DeleteInput(BaseModel):
    id: str


def _log(event: str, **fields: Any) -> None:
    path = os.environ.get("EXEC_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"event": event, "pid": os.getpid(), **fields}) + "\n")


async def _delete(input: DeleteInput, ctx: ToolContext) -> dict[str, Any]:
    block = os.environ.get("BLOCK_UNTIL")
    if block:  # started, then wait for the parent (which may SIGSTOP this process meanwhile)
        _log("started", id=input.id, key=ctx.idempotency_key)
        while not await asyncio.to_thread(Path(block).exists):  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    _log("executed", id=input.id, key=ctx.idempotency_key)
    return {"deleted": input.id}


def _told(item: Any) -> Callable[[Any], Any]:
    """A script item that logs each time the model is asked for it (after a tool's outcome)."""

    def answer(request: Any) -> Any:
        _log("model")
        return item

    return answer


async def _hanging_delete(input: DeleteInput, ctx: ToolContext) -> dict[str, Any]:
    _log("started", id=input.id, key=ctx.idempotency_key)
    await asyncio.sleep(3600)
    return {"deleted": input.id}


def build(
    url: str,
    script: list[Any],
    inner: list[Any] | None = None,
    *,
    hang: bool = False,
    idempotent: bool = False,
) -> Agent:
    """The ops agent; with ``inner`` it is a supervisor over a ``records`` sub-agent."""
    store = create_storage(url)
    lease = float(os.environ.get("LEASE", "30"))
    tool = create_tool(
        id="delete-record",
        description="Delete a record",
        input_schema=DeleteInput,
        execute=_hanging_delete if hang else _delete,
        require_approval=True,
        idempotent=idempotent,
    )
    if inner is None:
        return Agent(
            id="ops",
            model=ScriptedModel(script),
            tools=[tool],
            storage=store,
            claim_lease_seconds=lease,
        )
    records = Agent(
        id="records", description="Deletes records", model=ScriptedModel(inner), tools=[tool]
    )
    return Agent(
        id="ops",
        model=ScriptedModel(script),
        agents={"records": records},
        storage=store,
        claim_lease_seconds=lease,
    )


async def main(argv: list[str]) -> dict[str, Any]:
    command, url = argv[0], argv[1]
    supervisor = os.environ.get("SUPERVISOR") == "1"
    idempotent = os.environ.get("IDEMPOTENT") == "1"
    if command == "start":
        first = call("delete-record", {"id": "42"}, id="c1")
        if supervisor:
            agent = build(url, [call("agent-records", {"prompt": "delete 42"}, id="d1")], [first])
        else:
            agent = build(url, [first])
        result = await agent.generate("delete record 42", thread_id="t1", resource_id="u1")
        return {
            "run_id": result.run_id,
            "finish_reason": result.finish_reason,
            "pending": [p.tool_call_id for p in result.pending],
        }
    if command == "list":
        agent = build(url, [], [] if supervisor else None)
        page = await agent.list_suspended_runs(thread_id="t1")
        return {
            "total": page.total,
            "runs": [
                {
                    "run_id": r.run_id,
                    "calls": [
                        [c.tool_call_id, c.tool_name, c.args, c.agent_path] for c in r.tool_calls
                    ],
                }
                for r in page.runs
            ],
        }
    if command in ("approve", "decline"):
        run_id, call_id = argv[2], argv[3]
        agent = build(
            url,
            [_told(reply("Deleted 42."))],
            [reply("inner done")] if supervisor else None,
            idempotent=idempotent,
        )
        go = os.environ.get("GO_FILE")
        while go and not await asyncio.to_thread(Path(go).exists):  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        try:
            if command == "approve":
                result = await agent.approve_tool_call_generate(
                    run_id=run_id, tool_call_id=call_id, decided_by=argv[4]
                )
            else:
                result = await agent.decline_tool_call_generate(
                    run_id=run_id, tool_call_id=call_id, reason="not today"
                )
        except AgentError as exc:
            return {"error": exc.code, **exc.to_dict()}
        return {"text": result.text, "finish_reason": result.finish_reason}
    if command == "hang":
        agent = build(url, [reply("never")], hang=True, idempotent=idempotent)
        await agent.approve_tool_call_generate(run_id=argv[2])
        return {"error": "not killed"}
    if command == "recover":
        agent = build(url, [_told(reply("Recovered."))], idempotent=idempotent)
        streams = await agent.recover_interrupted_runs()
        async with asyncio.timeout(60):  # a running bot calls it every half lease
            while not streams and os.environ.get("WAIT"):
                await asyncio.sleep(0.1)
                streams = await agent.recover_interrupted_runs()
        results = [await s.result() for s in streams]
        return {
            "results": [
                {"text": r.text, "tool_results": [t.result for t in r.tool_results]}
                for r in results
            ]
        }
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    output = asyncio.run(main(sys.argv[1:]))
    print(json.dumps(output, default=str), flush=True)
