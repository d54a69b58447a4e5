"""The fake itself: it must reject what OpenAI rejects, or the strict-schema tests prove nothing."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI, BadRequestError, InternalServerError
from pydantic import BaseModel

from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall, strict_schema_problems


class Args(BaseModel):
    id: str
    reason: str | None = None


def _tool(parameters: dict[str, object], strict: bool = True) -> dict[str, object]:
    function = {"name": "t", "parameters": parameters, "strict": strict}
    return {"type": "function", "function": function}


def test_a_raw_pydantic_schema_marked_strict_is_rejected() -> None:
    problems = strict_schema_problems({"tools": [_tool(Args.model_json_schema())]})

    assert any("additionalProperties" in p for p in problems)
    assert any("'required'" in p for p in problems)
    assert any("'default'" in p for p in problems)


def test_non_strict_tools_are_not_checked() -> None:
    assert strict_schema_problems({"tools": [_tool(Args.model_json_schema(), strict=False)]}) == []


async def test_the_fake_answers_400_to_an_invalid_strict_schema(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.reply("never sent")

    with pytest.raises(BadRequestError, match="additionalProperties"):
        await openai_client.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": "hi"}],
            tools=[_tool(Args.model_json_schema())],  # type: ignore[list-item]
        )

    assert openai_server.pending == 1  # the scripted answer is still there


async def test_non_streaming_requests_get_the_same_answer_merged(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    openai_server.tool_calls(
        FakeToolCall("t", {"id": "a"}, id="c1"), FakeToolCall("t", {"id": "b"}, id="c2")
    )

    completion = await openai_client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "hi"}]
    )

    message = completion.choices[0].message
    assert [(c.id, c.function.arguments) for c in message.tool_calls or []] == [  # type: ignore[union-attr]
        ("c1", '{"id": "a"}'),
        ("c2", '{"id": "b"}'),
    ]
    assert completion.usage is not None and completion.usage.total_tokens == 18


async def test_running_out_of_script_fails_loudly_without_retries(
    openai_server: FakeOpenAIServer, openai_client: AsyncOpenAI
) -> None:
    with pytest.raises(InternalServerError, match="script exhausted"):
        await openai_client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}]
        )

    assert len(openai_server.requests) == 1
