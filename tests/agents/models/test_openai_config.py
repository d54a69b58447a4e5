"""Configuration: env vars honoured by the client itself, lazy client, resolve_model forms."""

from __future__ import annotations

import pytest

from agents.errors import AgentConfigError
from agents.models import (
    ModelError,
    OpenAIModel,
    ScriptedModel,
    TextDelta,
    reply,
    resolve_model,
)
from tests.agents.models.support import ask, collect
from tests.fakes.openai_server import FakeOpenAIServer


async def test_env_vars_are_honoured_when_no_client_is_injected(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-from-env")
    openai_server.reply("hi from env")
    model = OpenAIModel()

    try:
        events = await collect(model, ask())
    finally:
        await model.aclose()

    assert model.model_id == "openai/gpt-from-env"
    assert events[0] == TextDelta("hi from env")
    (request,) = openai_server.requests
    assert request.headers["authorization"] == "Bearer sk-from-env"
    assert request.body["model"] == "gpt-from-env"


def test_the_client_is_built_lazily_not_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)

    model = OpenAIModel()  # no key needed yet

    assert model.model_id == "openai/gpt-5-mini"


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
