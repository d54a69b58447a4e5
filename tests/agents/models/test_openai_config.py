"""Configuration: env vars honoured by the client itself, lazy client, resolve_model forms."""

from __future__ import annotations

import pytest
from openai import AsyncOpenAI

from agents.errors import AgentConfigError
from agents.models import (
    DEFAULT_OPENAI_MODEL,
    ModelError,
    OpenAIModel,
    ScriptedModel,
    TextDelta,
    reply,
    resolve_model,
)
from tests.agents.models.support import ask, collect
from tests.fakes.openai_server import FakeOpenAIServer


async def test_the_openai_library_honours_key_and_base_url_when_no_client_is_injected(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    openai_server.reply("hi from env")
    model = OpenAIModel("gpt-given")

    try:
        events = await collect(model, ask())
    finally:
        await model.aclose()

    assert model.model_id == "openai/gpt-given"
    assert events[0] == TextDelta("hi from env")
    (request,) = openai_server.requests
    assert request.headers["authorization"] == "Bearer sk-from-env"
    assert request.body["model"] == "gpt-given"


async def test_an_injected_client_is_used_and_left_open(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai_server.reply("hi from the injected client")
    client = AsyncOpenAI(api_key="sk-injected", base_url=openai_server.base_url)
    model = OpenAIModel(client=client)

    try:
        events = await collect(model, ask())
        await model.aclose()
        assert not client.is_closed()
    finally:
        await client.close()

    assert events[0] == TextDelta("hi from the injected client")
    (request,) = openai_server.requests
    assert request.headers["authorization"] == "Bearer sk-injected"
    assert request.body["model"] == DEFAULT_OPENAI_MODEL


def test_the_model_name_never_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_MODEL", "gpt-from-env")

    model = OpenAIModel()  # no key needed yet: the client is built lazily

    assert DEFAULT_OPENAI_MODEL == "gpt-5-mini"
    assert model.model_id == f"openai/{DEFAULT_OPENAI_MODEL}"
    assert resolve_model("openai/gpt-x").model_id == "openai/gpt-x"


async def test_a_missing_api_key_is_a_model_error_that_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)

    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        await collect(OpenAIModel("gpt-test"), ask())


async def test_max_retries_applies_to_the_client_built_from_env(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    openai_server.fail_forever(500)
    model = OpenAIModel("gpt-test", max_retries=1)

    try:
        with pytest.raises(ModelError):
            await collect(model, ask())
    finally:
        await model.aclose()

    assert len(openai_server.requests) == 2


def test_resolve_model_turns_openai_strings_into_openai_models() -> None:
    model = resolve_model("openai/gpt-5-mini")

    assert isinstance(model, OpenAIModel)
    assert model.model_id == "openai/gpt-5-mini"
    assert resolve_model("openai/org/fine-tuned:v2").model_id == "openai/org/fine-tuned:v2"


def test_resolve_model_passes_model_objects_through() -> None:
    scripted = ScriptedModel([reply("hi")])

    assert resolve_model(scripted) is scripted


@pytest.mark.parametrize("spec", ["gpt-5-mini", "openai/", "openai", "anthropic/claude", "", 42])
def test_resolve_model_rejects_anything_else_and_names_the_accepted_forms(spec: object) -> None:
    with pytest.raises(AgentConfigError) as caught:
        resolve_model(spec)  # type: ignore[arg-type]

    assert "'openai/<model>'" in str(caught.value)
    assert "Model object" in str(caught.value)
