"""Structured output: the auto-resume extraction request of SPEC 3.5."""

from __future__ import annotations

from typing import Any

import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel

from agents.models import ModelError, ObjectOutput, OpenAIModel, TextDelta, Usage
from tests.agents.models.support import ask, collect
from tests.fakes.openai_server import FakeOpenAIServer


class Address(BaseModel):
    street: str
    city: str


class ShippingAnswer(BaseModel):
    """The resume schema of a suspended tool."""

    address: Address
    note: str = ""


def extraction_schema(resume_schema: dict[str, Any]) -> dict[str, Any]:
    """Exactly the response schema SPEC 3.5 prescribes for auto-resume."""
    return {
        "type": "object",
        "properties": {
            "answered": {"type": "boolean"},
            "resume_data": {"anyOf": [resume_schema, {"type": "null"}]},
        },
        "required": ["answered", "resume_data"],
        "additionalProperties": False,
    }


async def test_structured_request_sends_strict_json_schema_and_yields_the_parsed_value(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    schema = extraction_schema(ShippingAnswer.model_json_schema())
    address = {"street": "Main 1", "city": "Oslo"}
    answer = {"answered": True, "resume_data": {"address": address}}
    openai_server.structured({"answered": True, "resume_data": {"address": address, "note": None}})

    events = await collect(
        OpenAIModel("gpt-test", client=openai_client),
        ask("Main 1, Oslo", response_schema=schema, response_schema_name="resume_shipping"),
    )

    # No text deltas: the JSON is the answer, not chat text. The injected null is dropped.
    assert events == [ObjectOutput(answer), Usage(11, 7)]
    assert ShippingAnswer.model_validate(answer["resume_data"]).note == ""
    body = openai_server.bodies[0]
    assert "tools" not in body
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    json_schema = response_format["json_schema"]
    assert json_schema["name"] == "resume_shipping"
    assert json_schema["strict"] is True
    sent = json_schema["schema"]
    assert sent["required"] == ["answered", "resume_data"]
    assert sent["additionalProperties"] is False
    # the resume schema's nested $defs were hoisted to the root, where "#/$defs/..." points
    assert set(sent["$defs"]) == {"Address"}
    assert sent["$defs"]["Address"]["additionalProperties"] is False


async def test_an_already_strict_schema_is_sent_as_it_is(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    schema = extraction_schema({"type": "object", "properties": {"ok": {"type": "boolean"}},
                                "required": ["ok"], "additionalProperties": False})  # fmt: skip
    openai_server.structured({"answered": False, "resume_data": None})

    events = await collect(
        OpenAIModel("gpt-test", client=openai_client), ask(response_schema=schema)
    )

    assert events[0] == ObjectOutput({"answered": False, "resume_data": None})
    assert openai_server.bodies[0]["response_format"]["json_schema"]["schema"] == schema


async def test_a_schema_strict_mode_cannot_express_is_requested_non_strict(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    schema = extraction_schema({"type": "object", "additionalProperties": {"type": "string"}})
    openai_server.structured({"answered": True, "resume_data": {"k": "v"}})

    events = await collect(
        OpenAIModel("gpt-test", client=openai_client), ask(response_schema=schema)
    )

    assert events[0] == ObjectOutput({"answered": True, "resume_data": {"k": "v"}})
    json_schema = openai_server.bodies[0]["response_format"]["json_schema"]
    assert json_schema["strict"] is False
    assert json_schema["schema"] == schema


async def test_invalid_json_in_a_structured_answer_raises_model_error(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply('{"answered": tr', finish="length")

    with pytest.raises(ModelError, match=r"not valid JSON.*cut off"):
        await collect(
            OpenAIModel("gpt-test", client=openai_client),
            ask(response_schema=extraction_schema({"type": "string"})),
        )


async def test_a_refusal_raises_model_error(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.refuse("I can't help with that.")

    with pytest.raises(ModelError, match=r"refused.*can't help"):
        await collect(
            OpenAIModel("gpt-test", client=openai_client),
            ask(response_schema=extraction_schema({"type": "string"})),
        )


async def test_plain_requests_still_stream_text(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply('{"not": "parsed"}')

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask())

    assert events[0] == TextDelta('{"not": "parsed"}')
