import pytest

from agents._messages import Message
from agents.errors import ScriptExhausted
from agents.models import (
    ModelRequest,
    ObjectOutput,
    ScriptedModel,
    TextDelta,
    ToolCallRequest,
    call,
    calls,
    obj,
    reply,
)


def _request(text: str = "hi") -> ModelRequest:
    return ModelRequest(messages=[Message(role="user", content=text)])


async def _events(model: ScriptedModel, request: ModelRequest) -> list[object]:
    return [e async for e in model.stream(request)]


async def test_each_request_consumes_one_item_in_order() -> None:
    model = ScriptedModel(
        [
            reply("hello there"),
            call("t", {"a": 1}, id="c1"),
            calls(call("x"), call("y")),
            obj({"k": 1}),
        ]
    )
    first = await _events(model, _request())
    assert "".join(e.text for e in first if isinstance(e, TextDelta)) == "hello there"
    assert [e for e in await _events(model, _request()) if isinstance(e, ToolCallRequest)] == [
        ToolCallRequest("c1", "t", {"a": 1})
    ]
    parallel = [e for e in await _events(model, _request()) if isinstance(e, ToolCallRequest)]
    assert [e.name for e in parallel] == ["x", "y"]
    assert len({e.id for e in parallel}) == 2
    assert [e for e in await _events(model, _request()) if isinstance(e, ObjectOutput)] == [
        ObjectOutput({"k": 1})
    ]
    assert model.remaining == 0


async def test_callable_items_see_the_request() -> None:
    model = ScriptedModel([lambda request: reply(f"you said {request.messages[-1].content}")])
    events = await _events(model, _request("ping"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "you said ping"


async def test_requests_are_recorded_with_messages_tools_and_schema() -> None:
    model = ScriptedModel([obj({})])
    request = ModelRequest(
        messages=[Message(role="user", content="x")], response_schema={"type": "object"}
    )
    await _events(model, request)
    assert model.requests[0].messages[0].content == "x"
    assert model.requests[0].tools == []
    assert model.requests[0].response_schema == {"type": "object"}


async def test_asking_for_more_than_the_script_raises_script_exhausted() -> None:
    model = ScriptedModel([reply("one")])
    await _events(model, _request())
    with pytest.raises(ScriptExhausted):
        await _events(model, _request())
