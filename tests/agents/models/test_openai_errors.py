"""Failures: the client's own retries, then one clear ModelError (status, request id)."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI

from agents._messages import ToolSpec
from agents.models import ModelError, OpenAIModel, TextDelta, ToolCallRequest
from tests.agents.models.conftest import MAX_RETRIES
from tests.agents.models.support import ask, collect
from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall

ECHO = ToolSpec(
    name="echo",
    description="Echo.",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
)


async def test_rate_limit_is_retried_by_the_client_then_succeeds(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail(429, message="Rate limit reached")
    openai_server.reply("ok")

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask())

    assert events[0] == TextDelta("ok")
    assert len(openai_server.requests) == 2
    assert openai_server.bodies[0] == openai_server.bodies[1]


async def test_retry_after_in_seconds_is_honoured(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail(503, retry_after="0.01")
    openai_server.reply("ok")

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask())

    assert events[0] == TextDelta("ok")
    assert len(openai_server.requests) == 2


async def test_500_forever_becomes_model_error_with_status_and_request_id(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail_forever(500, message="The server had an error")

    with pytest.raises(ModelError) as caught:
        await collect(OpenAIModel("gpt-test", client=openai_client), ask())

    attempts = openai_server.requests
    assert len(attempts) == MAX_RETRIES + 1
    assert caught.value.status == 500
    assert caught.value.request_id == attempts[-1].request_id
    assert "The server had an error" in str(caught.value)
    assert f"gave up after {MAX_RETRIES} retries" in str(caught.value)
    assert caught.value.code == "MODEL_ERROR"


async def test_max_retries_on_the_model_overrides_the_injected_client(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail_forever(502)

    with pytest.raises(ModelError):
        await collect(OpenAIModel("gpt-test", client=openai_client, max_retries=0), ask())

    assert len(openai_server.requests) == 1
    assert openai_client.max_retries == MAX_RETRIES  # the injected client is not changed


async def test_client_errors_are_not_retried_and_carry_a_hint(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.fail(404, message="The model `gpt-nope` does not exist")

    with pytest.raises(ModelError) as caught:
        await collect(OpenAIModel("gpt-nope", client=openai_client), ask())

    assert len(openai_server.requests) == 1
    assert caught.value.status == 404
    assert "does not exist" in str(caught.value)
    assert "OPENAI_MODEL" in str(caught.value)


async def test_the_api_key_never_appears_in_the_error(openai_server: FakeOpenAIServer) -> None:
    secret = "sk-test-0123456789abcdef"
    openai_server.fail(401, message=f"Incorrect API key provided: {secret}")

    async with openai_server.client(api_key=secret) as client:
        with pytest.raises(ModelError) as caught:
            await collect(OpenAIModel("gpt-test", client=client), ask())

    assert secret not in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)
    assert caught.value.status == 401


async def test_an_error_event_inside_the_stream_becomes_model_error(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.stream_error("overloaded mid-answer", after=["partial"])
    stream = OpenAIModel("gpt-test", client=openai_client).stream(ask())

    assert await anext(stream) == TextDelta("partial")
    with pytest.raises(ModelError) as caught:
        await anext(stream)

    assert "overloaded mid-answer" in str(caught.value)
    assert caught.value.request_id == openai_server.requests[0].request_id


async def test_unreachable_server_becomes_model_error() -> None:
    server = FakeOpenAIServer()
    await server.start()
    await server.close()  # nothing listens on this port any more

    async with server.client(max_retries=0) as client:
        with pytest.raises(ModelError) as caught:
            await collect(OpenAIModel("gpt-test", client=client), ask())

    assert caught.value.status is None
    assert "could not reach" in str(caught.value)
    assert server.base_url in str(caught.value)


async def test_malformed_tool_arguments_raise_instead_of_guessing(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(FakeToolCall("echo", '{"text": "unterminated', id="call_bad"))

    with pytest.raises(ModelError) as caught:
        await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[ECHO]))

    assert "malformed JSON arguments for tool 'echo'" in str(caught.value)
    assert "call_bad" in str(caught.value)


async def test_truncated_tool_arguments_say_the_answer_was_cut_off(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(FakeToolCall("echo", '{"text": "a lo', id="c"), finish="length")

    with pytest.raises(ModelError, match="cut off"):
        await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[ECHO]))


async def test_arguments_that_are_not_an_object_raise(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(FakeToolCall("echo", '["a", "b"]', id="c"))

    with pytest.raises(ModelError, match="not an object"):
        await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[ECHO]))


async def test_empty_arguments_mean_no_arguments(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(FakeToolCall("echo", "", id="c"))

    events = await collect(OpenAIModel("gpt-test", client=openai_client), ask(tools=[ECHO]))

    assert events[0] == ToolCallRequest("c", "echo", {})
