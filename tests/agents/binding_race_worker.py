"""A separate OS process deciding one pending refund: ``python binding_race_worker.py URL RUN
MODE LOG FINGERPRINT`` (the fingerprint of the call as shown, as a card passes it). ``MODE`` is
``edit`` (approve with an amount over 1,000, which the rules present again as a two-person
call) or ``approve`` (approve as shown). It prints ``ready``, waits for a line on stdin,
decides, waits for the run, and prints one JSON line: what happened.
``test_binding_races.py`` races an edit against an approval of the same call.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent, AgentError, CallRules, ServedParts
from agents.models import ScriptedModel, call, reply
from storage import Storage, create_storage
from tools import ToolContext, create_tool


class RefundInput(BaseModel):
    order: int
    amount: float


def _rules(name: str, tool_id: str, path: tuple[str, ...], args: dict[str, Any]) -> CallRules:
    big = float(args.get("amount", 0)) > 1000
    return CallRules(require_approval=True, approvals=2 if big else 1, confirm=big)


def build_agent(store: Storage, log: Path, *, asks: bool = False) -> Agent:
    """The agent both the test and the workers serve: a refund that logs each execution
    (``asks``: its model first calls it, as the test's does; a worker's only answers)."""

    async def refund(input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(input.model_dump()) + "\n")
        return {"refunded": input.amount}

    tool = create_tool(
        id="refund", description="Issue a refund", input_schema=RefundInput, execute=refund
    )
    agent = Agent(
        id="ops",
        model=ScriptedModel(
            [call("refund", {"order": 49, "amount": 300}, id="c1"), reply("ok")]
            if asks
            else [reply("ok")]
        ),
        tools=[tool],
        storage=store,
    )
    return agent.served(ServedParts(call_rules=_rules))


async def main(url: str, run_id: str, mode: str, log: str, shown: str) -> None:
    store = create_storage(url)
    try:
        agent = build_agent(store, Path(log))
        await store.get_value("warm-up")
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        args = {"order": 49, "amount": 1150} if mode == "edit" else None
        try:
            stream = await agent.approve_tool_call(
                run_id=run_id, args=args, fingerprint=shown, decided_by=mode
            )
        except AgentError as exc:
            print(json.dumps({"mode": mode, "refused": exc.code}), flush=True)
            return
        result = await stream.result()
        print(json.dumps({"mode": mode, "finish": result.finish_reason}), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
