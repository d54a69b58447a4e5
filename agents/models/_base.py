"""The small ``Model`` protocol the run loop talks to, and the events a model streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agents._messages import Message, ToolSpec

DEFAULT_OPENAI_MODEL = "gpt-5-mini"
"""The OpenAI model name used when none is given (``OpenAIModel()``); the one default."""


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One request to a model."""

    messages: list[Message]
    """The conversation so far, system instructions first."""
    tools: list[ToolSpec] = field(default_factory=list)
    """Tools the model may call (empty for structured-output requests); read only: their
    schemas are shared by every turn."""
    response_schema: dict[str, Any] | None = None
    """When set, the model must answer with one JSON object valid against this schema."""
    response_schema_name: str = "response"
    """A name for the schema (OpenAI needs one)."""


@dataclass(frozen=True)
class TextDelta:
    """A piece of the answer's text, as it arrives."""

    text: str


@dataclass(frozen=True)
class ToolCallRequest:
    """A complete tool call (fragments already assembled)."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ObjectOutput:
    """The parsed answer to a structured-output request."""

    value: Any


@dataclass(frozen=True)
class Usage:
    """Token counts; adapters emit one at the end of a response."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


ModelEvent = TextDelta | ToolCallRequest | ObjectOutput | Usage


@runtime_checkable
class Model(Protocol):
    """What the run loop needs from a language model."""

    @property
    def model_id(self) -> str:
        """A human-readable id such as ``openai/gpt-5-mini`` or ``scripted``."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Answer ``request``, yielding text deltas, complete tool calls, an object, usage.

        Raises ``agents.errors.ModelError`` when the provider fails for good.
        """
        ...
