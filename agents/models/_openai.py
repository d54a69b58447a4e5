"""``OpenAIModel``: the ``Model`` protocol over OpenAI Chat Completions (streaming), and
``resolve_model`` for the ``"openai/<model>"`` strings an ``Agent`` accepts.

Works with any OpenAI-compatible server (vLLM, Ollama, LM Studio) through ``OPENAI_BASE_URL``.
Retries with backoff (429, 5xx, connection errors) are the ``openai`` client's own; what fails
after them is raised as ``agents.errors.ModelError`` (with ``status`` and ``request_id``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import openai
from openai import AsyncOpenAI, omit

from agents.errors import AgentConfigError, ModelError
from agents.models._base import (
    DEFAULT_OPENAI_MODEL,
    Model,
    ModelEvent,
    ModelRequest,
    ObjectOutput,
    TextDelta,
    Usage,
)
from agents.models._openai_errors import to_model_error
from agents.models._openai_schema import drop_injected_nulls
from agents.models._openai_wire import (
    ToolCallAssembler,
    to_openai_messages,
    to_openai_tools,
    to_response_format,
)

log = logging.getLogger(__name__)


class OpenAIModel:
    """A model served by the OpenAI Chat Completions API (or any compatible server).

    Args:
        model: The model name (default ``agents.models.DEFAULT_OPENAI_MODEL``). This class
            reads no environment variable: an application reads its configuration once and
            passes the name (and the client) in.
        client: The ``AsyncOpenAI`` to use (an application builds it from its settings).
            When omitted, ``AsyncOpenAI()`` is built on first use; the ``openai`` library
            itself reads ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` then. Closed by
            :meth:`aclose` only when built here.
        max_retries: How often the client retries 429/5xx/connection errors before the
            failure becomes a ``ModelError``. ``None`` keeps the client's own setting (the
            ``openai`` default is 2).

    Example:
        >>> from openai import AsyncOpenAI
        >>> model = OpenAIModel("gpt-5-mini", client=AsyncOpenAI(api_key="sk-..."))
        >>> model.model_id
        'openai/gpt-5-mini'
    """

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        client: AsyncOpenAI | None = None,
        max_retries: int | None = None,
    ) -> None:
        self._name = model or DEFAULT_OPENAI_MODEL
        self._client = client
        self._owns_client = client is None
        self._max_retries = max_retries
        self._ready: AsyncOpenAI | None = None

    @property
    def model_id(self) -> str:
        """``openai/<model>``."""
        return f"openai/{self._name}"

    @property
    def name(self) -> str:
        """The model name sent to the API."""
        return self._name

    def __repr__(self) -> str:
        return f"OpenAIModel({self._name!r})"

    async def aclose(self) -> None:
        """Close the client if this model built it (an injected client is left open)."""
        if self._owns_client and self._client is not None:
            await self._client.close()
            self._client = self._ready = None

    def _get_client(self) -> AsyncOpenAI:
        if self._ready is not None:
            return self._ready
        if self._client is None:
            try:
                self._client = (
                    AsyncOpenAI()
                    if self._max_retries is None
                    else AsyncOpenAI(max_retries=self._max_retries)
                )
            except openai.OpenAIError:
                raise ModelError(
                    "no OpenAI credentials: set OPENAI_API_KEY (any non-empty value for a local "
                    "server that needs none) and, for an OpenAI-compatible server such as vLLM "
                    "or Ollama, OPENAI_BASE_URL; or pass OpenAIModel(client=AsyncOpenAI(...))",
                    hint="no model API key is set: an admin should set OPENAI_API_KEY "
                    "(and OPENAI_BASE_URL for a compatible server) and restart the bot",
                ) from None
            self._ready = self._client
        elif self._max_retries is None:
            self._ready = self._client
        else:
            self._ready = self._client.with_options(max_retries=self._max_retries)
        return self._ready

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the answer: ``TextDelta``s as they arrive, then the complete
        ``ToolCallRequest``s, or one ``ObjectOutput`` for a structured-output request, then
        ``Usage``. Raises ``ModelError`` when the API fails for good or answers malformed JSON.
        """
        client = self._get_client()
        structured = request.response_schema is not None
        log.debug(
            "model request: model=%s messages=%d tools=%d structured=%s",
            self._name, len(request.messages), len(request.tools), structured,
        )  # fmt: skip
        request_id: str | None = None
        assembler = ToolCallAssembler()
        content: list[str] = []
        refusal: list[str] = []
        usage = Usage()
        finish_reason: str | None = None
        try:
            stream = await client.chat.completions.create(
                model=self._name,
                messages=to_openai_messages(request.messages),
                tools=to_openai_tools(request.tools) if request.tools else omit,
                response_format=(
                    to_response_format(request.response_schema, request.response_schema_name)
                    if request.response_schema is not None
                    else omit
                ),
                stream=True,
                stream_options={"include_usage": True},
            )
            request_id = stream.response.headers.get("x-request-id")
            async with stream:
                async for chunk in stream:
                    if chunk.usage is not None:  # compatible servers may leave counts out
                        usage = Usage(
                            chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0
                        )
                    for choice in chunk.choices:
                        if choice.index != 0:
                            continue
                        delta = choice.delta
                        if delta.content:
                            if structured:
                                content.append(delta.content)
                            else:
                                yield TextDelta(delta.content)
                        if delta.refusal:
                            refusal.append(delta.refusal)
                        for fragment in delta.tool_calls or ():
                            assembler.add(fragment)
                        finish_reason = choice.finish_reason or finish_reason
        except openai.OpenAIError as exc:
            raise self._error(exc, client, request_id) from exc
        schemas = {tool.name: tool.parameters for tool in request.tools}
        for call in assembler.finish(schemas, finish_reason):
            yield call
        if request.response_schema is not None:
            yield ObjectOutput(
                _parse_object(
                    "".join(content), "".join(refusal), request.response_schema, finish_reason
                )
            )
        yield usage

    def _error(
        self, exc: openai.OpenAIError, client: AsyncOpenAI, request_id: str | None
    ) -> ModelError:
        api_key = getattr(client, "api_key", None)
        return to_model_error(
            exc,
            model=self._name,
            max_retries=client.max_retries,
            base_url=str(client.base_url),
            api_key=api_key if isinstance(api_key, str) else None,
            request_id=request_id,
        )


def _parse_object(
    text: str, refusal: str, schema: dict[str, Any], finish_reason: str | None
) -> Any:
    if refusal:
        raise ModelError(f"the model refused the structured-output request: {refusal}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = " (the answer was cut off: finish_reason=length)" if finish_reason == "length" else ""
        raise ModelError(
            f"the model's structured output is not valid JSON{cut}: {exc.msg} at position "
            f"{exc.pos} of {len(text)} characters"
        ) from None
    return drop_injected_nulls(value, schema)


def resolve_model(spec: str | Model) -> Model:
    """The ``Model`` for an ``Agent(model=...)`` value.

    ``"openai/<model>"`` becomes ``OpenAIModel("<model>")``; a ``Model`` object is returned as
    it is; anything else raises ``AgentConfigError``.

    Example:
        >>> resolve_model("openai/gpt-5-mini").model_id
        'openai/gpt-5-mini'
    """
    if isinstance(spec, str):
        provider, slash, name = spec.partition("/")
        if provider == "openai" and slash and name.strip():
            return OpenAIModel(name.strip())
    elif isinstance(spec, Model):
        return spec
    raise AgentConfigError(
        f"unknown model {spec!r}: pass a string 'openai/<model>' (e.g. 'openai/gpt-5-mini'; "
        "OPENAI_API_KEY and OPENAI_BASE_URL are honoured) or a Model object such as "
        "OpenAIModel(...) or ScriptedModel(...)"
    )
