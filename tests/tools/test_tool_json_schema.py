"""``Tool.json_schema``: a schema from elsewhere is what the model sees, untouched."""

from __future__ import annotations

from pydantic import BaseModel

from tools import create_tool
from tools.mcp import MCPArguments


class In(BaseModel):
    id: str


async def _noop(input: BaseModel, ctx: object) -> None:
    return None


def test_without_json_schema_the_pydantic_schema_is_sent() -> None:
    tool = create_tool(id="t", description="d", input_schema=In, execute=_noop)
    assert tool.json_schema is None
    assert tool.parameters_schema() == In.model_json_schema()


def test_a_json_schema_is_sent_as_given_and_callers_get_a_copy() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    tool = create_tool(id="t", description="d", input_schema=MCPArguments, execute=_noop)
    tool = type(tool)(**{**tool.__dict__, "json_schema": schema})
    sent = tool.parameters_schema()
    assert sent == schema
    sent["properties"]["n"]["type"] = "string"
    assert tool.parameters_schema() == schema
    assert tool.parse_input({"n": 1, "extra": [1]}).model_dump() == {"n": 1, "extra": [1]}
