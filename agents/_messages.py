"""The conversation format shared by the run loop, memory, snapshots and model adapters."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ToolCallPart(BaseModel):
    """One tool call the model asked for."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class Message(BaseModel):
    """One chat message (OpenAI-shaped, provider-neutral)."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCallPart] = Field(default_factory=list)
    """Set on assistant messages that call tools."""
    tool_call_id: str | None = None
    """Set on tool messages: the call this is the result of."""
    name: str | None = None
    """Set on tool messages: the tool's name."""


class ToolSpec(BaseModel):
    """A tool as the model sees it."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]
    """The input's JSON schema. Its contents are shared with every other turn (built once per
    tool): a model adapter reads them, and copies before changing anything."""
