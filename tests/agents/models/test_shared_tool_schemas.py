"""A tool's schema is built once and shared by every model turn: our adapters never change it.

``Tool.shared_parameters_schema`` goes into every ``ModelRequest`` as is (no copy per turn), so
an adapter that changed it would change what every later turn of every agent offers. Both
adapters are run here on schemas that take each path of the OpenAI strict-mode rewrite.
"""

from __future__ import annotations

import copy
from typing import Any

from openai import AsyncOpenAI
from pydantic import BaseModel, Field

from agents import Agent
from agents.models import OpenAIModel, ScriptedModel, call, reply
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall
from tools import Tool, ToolContext, create_tool


class Address(BaseModel):
    city: str = Field(title="City", min_length=1)
    zip: str | None = None


class StrictInput(BaseModel):
    """Nested model ($defs), titles, defaults, an optional field: the strict rewrite."""

    id: str
    note: str = "none"
    address: Address | None = None


class FreeFormInput(BaseModel):
    """A free-form dict: strict mode cannot express it, the schema is sent non-strict."""

    id: str
    extra: dict[str, Any] = {}


async def _done(input: BaseModel, ctx: ToolContext) -> dict[str, Any]:
    return {"ok": True}


def _tools() -> list[Tool]:
    return [
        create_tool(id="strict-tool", description="s", input_schema=StrictInput, execute=_done),
        create_tool(id="free-tool", description="f", input_schema=FreeFormInput, execute=_done),
    ]


def _before(tools: list[Tool]) -> list[dict[str, Any]]:
    return [copy.deepcopy(t.shared_parameters_schema) for t in tools]


async def test_the_openai_adapter_leaves_the_shared_schemas_as_they_were(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    tools = _tools()
    before = _before(tools)
    openai_server.tool_calls(
        FakeToolCall("strict-tool", {"id": "a", "note": None, "address": None}, id="call_1"),
        FakeToolCall("free-tool", {"id": "b", "extra": {"k": 1}}, id="call_2"),
    )
    openai_server.reply("Done.")
    agent = Agent(id="ops", model=OpenAIModel("gpt-test", client=openai_client), tools=tools)

    result = await agent.generate("go")

    assert result.finish_reason == "stop"
    assert [t.shared_parameters_schema for t in tools] == before
    first, second = openai_server.bodies
    assert first["tools"] == second["tools"]
    assert [t["function"]["strict"] for t in first["tools"]] == [True, False]


async def test_the_scripted_model_leaves_the_shared_schemas_as_they_were() -> None:
    tools = _tools()
    before = _before(tools)
    model = ScriptedModel([call("strict-tool", {"id": "a"}), reply("Done.")])

    await Agent(id="ops", model=model, tools=tools).generate("go")

    assert [t.shared_parameters_schema for t in tools] == before
    offered = [[spec.parameters for spec in r.tools] for r in model.requests]
    assert offered == [before, before]


def test_the_shared_schema_is_built_once_and_parameters_schema_stays_a_fresh_copy() -> None:
    tool = _tools()[0]

    assert tool.shared_parameters_schema is tool.shared_parameters_schema
    assert tool.shared_parameters_schema == StrictInput.model_json_schema()
    assert tool.parameters_schema() is not tool.shared_parameters_schema
