"""OpenAIModel streaming through the REAL openai client against the fake server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from openai import AsyncOpenAI
from pydantic import BaseModel

from agents._messages import Message, ToolCallPart, ToolSpec
from agents.models import ModelRequest, OpenAIModel, TextDelta, ToolCallRequest, Usage
from tests.agents.models.support import ask, collect
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall


class DeleteRecord(BaseModel):
    id: str
    reason: str | None = None
    hard: bool = False


DELETE = ToolSpec(
    name="delete_record",
    description="Delete one record.",
    parameters=DeleteRecord.model_json_schema(),
)


async def test_plain_answer_streams_deltas_in_order_then_usage(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("The ", "record ", "is ", "gone.", usage=(42, 9))
    model = OpenAIModel("gpt-test", client=openai_client)

    events = await collect(model, ask("Delete abc-123"))

    assert events == [
        TextDelta("The "),
        TextDelta("record "),
        TextDelta("is "),
        TextDelta("gone."),
        Usage(input_tokens=42, output_tokens=9),
    ]


async def test_each_delta_is_yielded_as_it_arrives_not_at_the_end(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("first", " second", pause_after=1)  # the fake holds the rest back
    stream = OpenAIModel("gpt-test", client=openai_client).stream(ask())

    first = await asyncio.wait_for(anext(stream), timeout=5)
    openai_server.release()
    rest = [event async for event in stream]

    assert first == TextDelta("first")
    assert rest == [TextDelta(" second"), Usage(11, 7)]


async def test_a_consumer_may_stop_early(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("first", " second")
    openai_server.reply("next answer")
    model = OpenAIModel("gpt-test", client=openai_client)
    stream = model.stream(ask())
    assert isinstance(stream, AsyncGenerator)

    assert await anext(stream) == TextDelta("first")
    await stream.aclose()  # the HTTP response is closed; the client stays usable

    assert (await collect(model, ask()))[0] == TextDelta("next answer")


async def test_request_is_a_streaming_chat_completion_with_usage(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("ok")

    await collect(OpenAIModel("gpt-test", client=openai_client), ask("hello"))

    (body,) = openai_server.bodies
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
    ]
    assert "tools" not in body
    assert "response_format" not in body


async def test_history_with_tool_calls_is_sent_in_wire_format(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("Done.")
    messages = [
        Message(role="system", content="You are ops."),
        Message(role="user", content="Delete abc-123"),
        Message(
            role="assistant",
            tool_calls=[ToolCallPart(id="call_1", name="delete_record", args={"id": "abc-123"})],
        ),
        Message(role="tool", tool_call_id="call_1", name="delete_record", content='{"ok":true}'),
    ]

    await collect(
        OpenAIModel("gpt-test", client=openai_client),
        ModelRequest(messages=messages, tools=[DELETE]),
    )

    assert openai_server.bodies[0]["messages"] == [
        {"role": "system", "content": "You are ops."},
        {"role": "user", "content": "Delete abc-123"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "delete_record", "arguments": '{"id":"abc-123"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'},
    ]


async def test_one_tool_call_is_assembled_from_fragments(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(
        FakeToolCall("delete_record", {"id": "abc-123", "reason": "dup"}, id="call_a"),
        fragment_size=3,
        usage=(30, 12),
    )

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[DELETE]))

    assert events == [
        ToolCallRequest("call_a", "delete_record", {"id": "abc-123", "reason": "dup"}),
        Usage(30, 12),
    ]


async def test_parallel_tool_calls_interleaved_in_many_fragments_are_assembled(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    calls = [
        FakeToolCall("delete_record", {"id": "a-1", "reason": "x" * 40}, id="call_1"),
        FakeToolCall("delete_record", {"id": "b-2", "hard": True}, id="call_2"),
        FakeToolCall("delete_record", {"id": "c-3", "reason": "ünïcode ✓"}, id="call_3"),
    ]
    openai_server.tool_calls(*calls, fragment_size=1, interleave=True)

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[DELETE]))

    assert events[:3] == [
        ToolCallRequest("call_1", "delete_record", {"id": "a-1", "reason": "x" * 40}),
        ToolCallRequest("call_2", "delete_record", {"id": "b-2", "hard": True}),
        ToolCallRequest("call_3", "delete_record", {"id": "c-3", "reason": "ünïcode ✓"}),
    ]
    assert isinstance(events[3], Usage)


async def test_text_before_tool_calls_streams_first(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(
        FakeToolCall("delete_record", {"id": "a"}, id="call_1"), text=["Deleting", " now."]
    )

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[DELETE]))

    assert events[:3] == [
        TextDelta("Deleting"),
        TextDelta(" now."),
        ToolCallRequest("call_1", "delete_record", {"id": "a"}),
    ]


async def test_nulls_strict_mode_forces_for_omitted_fields_are_dropped(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    # Strict mode makes the model send every field; ``hard`` has a non-null default, so its
    # null means "left out" and must not reach the tool (DeleteRecord would reject hard=None).
    openai_server.tool_calls(
        FakeToolCall("delete_record", {"id": "a", "reason": None, "hard": None}, id="call_1")
    )

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[DELETE]))

    call = events[0]
    assert isinstance(call, ToolCallRequest)
    assert call.args == {"id": "a", "reason": None}
    assert DeleteRecord.model_validate(call.args) == DeleteRecord(id="a")


async def test_tool_schemas_are_sent_in_strict_form_and_accepted(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("ok")  # the fake answers 400 like OpenAI if a strict schema is invalid

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[DELETE]))

    assert events[0] == TextDelta("ok")
    (tool,) = openai_server.bodies[0]["tools"]
    assert tool == {
        "type": "function",
        "function": {
            "name": "delete_record",
            "description": "Delete one record.",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "hard": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                },
                "required": ["id", "reason", "hard"],
                "additionalProperties": False,
            },
        },
    }


async def test_a_schema_strict_mode_cannot_express_is_sent_non_strict(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    class Patch(BaseModel):
        fields: dict[str, str]

    spec = ToolSpec(name="patch", description="Patch.", parameters=Patch.model_json_schema())
    openai_server.reply("ok")

    await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[spec]))

    function = openai_server.bodies[0]["tools"][0]["function"]
    assert function["strict"] is False
    assert function["parameters"] == Patch.model_json_schema()
