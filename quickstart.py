"""The quick start of docs/runtime.md, as written (a test keeps the two identical)."""

import asyncio

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import create_storage
from tools import ToolContext, create_tool


class DeleteInput(BaseModel):
    id: str


async def delete_record(input: DeleteInput, ctx: ToolContext) -> dict:
    print(f"deleting {input.id} (idempotency key {ctx.idempotency_key})")
    return {"deleted": input.id}


delete_tool = create_tool(
    id="delete-record",
    description="Delete a record by ID",
    input_schema=DeleteInput,
    execute=delete_record,
    require_approval=True,  # a person must countersign every call
)


async def main() -> None:
    agent = Agent(
        id="ops",
        instructions="You run operations.",
        # ScriptedModel plays a fixed script; use model="openai/gpt-5-mini" for a real one.
        model=ScriptedModel([call("delete-record", {"id": "abc-123"}), reply("Deleted abc-123.")]),
        tools={"delete-record": delete_tool},
        storage=create_storage("memory://"),  # default: SQLite at ./data/countersign.db
    )
    stream = await agent.stream("Delete record abc-123")
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":
            print("needs approval:", chunk.payload.tool_name, chunk.payload.args)
    pending = (await stream.result()).pending[0]

    # ...later, in any process with the same storage, someone countersigns:
    approved = await agent.approve_tool_call(
        run_id=stream.run_id,
        tool_call_id=pending.tool_call_id,
        fingerprint=pending.fingerprint,  # binds the decision to the arguments shown
        decided_by="U024BE7LH",
    )
    print((await approved.result()).text)


asyncio.run(main())
