"""``/call <tool> key=value``: the offline model's plain command syntax, and ``MODEL=offline``
serving any agent (sub-agents too) on the offline model."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agents import Agent, ServedParts
from agents.models import ModelRequest, TextDelta, ToolCallRequest
from bot import load_settings
from bot._errors import BotConfigError
from bot.demo import DemoModel
from bot.demo._commands import parse_call
from tools import ToolContext, create_tool

SCHEMAS: dict[str, dict[str, Any]] = {
    "archive-ticket": {
        "type": "object",
        "properties": {"id": {"type": "string"}, "reason": {"type": "string"}},
    },
    "refund": {
        "type": "object",
        "properties": {
            "order": {"type": "integer"},
            "amount": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    },
}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("/call archive-ticket id=42", ("archive-ticket", {"id": "42"})),
        (
            '/call archive-ticket id=abc-1 reason="two words"',
            ("archive-ticket", {"id": "abc-1", "reason": "two words"}),
        ),
        ("/call refund order=7 amount=12.5", ("refund", {"order": 7, "amount": 12.5})),
        ('/call refund tags=["a", "b"] order=3', ("refund", {"tags": ["a", "b"], "order": 3})),
        (
            "/call archive-ticket id='it is' reason=x",
            ("archive-ticket", {"id": "it is", "reason": "x"}),
        ),
        ('/call refund {"order": 7, "amount": 250}', ("refund", {"order": 7, "amount": 250})),
        ("  /call refund order=x", ("refund", {"order": "x"})),  # the tool's schema says no
        ("/call archive-ticket", ("archive-ticket", {})),
    ],
)
def test_a_call_takes_values_as_the_tools_schema_asks(
    message: str, expected: tuple[str, dict[str, Any]]
) -> None:
    assert parse_call(message, SCHEMAS) == expected


@pytest.mark.parametrize(
    ("message", "says"),
    [
        ("/call", "/call archive-ticket id=… reason=…"),
        ("/call nope id=1", "There is no tool named 'nope' here."),
        ("/call refund 7", "Write each argument as key=value, not '7': /call refund order=…"),
        ('/call archive-ticket reason="open', "write text with spaces in quotes"),
        ("/call refund tags=[1, 2", "The value of tags for refund does not parse"),
        ("/call refund {not json}", "The arguments of refund are not a JSON object"),
    ],
)
def test_a_mistake_is_answered_with_how_to_call(message: str, says: str) -> None:
    answer = parse_call(message, SCHEMAS)
    assert isinstance(answer, str) and says in answer


class _Id(BaseModel):
    id: str


async def _nothing(input: _Id, ctx: ToolContext) -> None:
    return None


def test_the_served_agent_and_its_sub_agents_run_on_the_model_given() -> None:
    tool = create_tool(id="archive", description="a", input_schema=_Id, execute=_nothing)
    sub = Agent(id="sub", model="openai/gpt-5-mini", tools=[tool])
    top = Agent(id="top", model="openai/gpt-5-mini", agents={"sub": sub})
    offline = DemoModel()
    served = top.served(ServedParts(model=offline))
    assert served.model is offline and served.agents["sub"].model is offline
    assert top.model.model_id == "openai/gpt-5-mini"  # the agent given is unchanged
    assert top.served(ServedParts()).model.model_id == "openai/gpt-5-mini"


async def test_the_offline_model_calls_the_tool_a_message_names() -> None:
    from agents._messages import Message, ToolSpec

    spec = ToolSpec(name="archive-ticket", description="", parameters=SCHEMAS["archive-ticket"])
    request = ModelRequest(
        messages=[Message(role="user", content="/call archive-ticket id=9")], tools=[spec]
    )
    events = [event async for event in DemoModel().stream(request)]
    [call] = [e for e in events if isinstance(e, ToolCallRequest)]
    assert (call.name, call.args) == ("archive-ticket", {"id": "9"})
    hello = ModelRequest(messages=[Message(role="user", content="hello")], tools=[spec])
    helped = "".join(e.text for e in DemoModel().answer(hello) if isinstance(e, TextDelta))
    assert "/call archive-ticket id=… reason=…" in helped  # not the built-in agent's help


def test_model_is_offline_or_unset() -> None:
    assert load_settings({}).model is None
    assert load_settings({"MODEL": "Offline"}).model == "offline"
    with pytest.raises(BotConfigError) as info:
        load_settings({"MODEL": "gpt-5"})
    assert "MODEL must be offline" in str(info.value)
    assert "the OpenAI model's name goes in OPENAI_MODEL" in str(info.value)
