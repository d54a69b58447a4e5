"""Small helpers shared by the model adapter tests."""

from __future__ import annotations

from typing import Any

from agents._messages import Message, ToolSpec
from agents.models import Model, ModelEvent, ModelRequest


def ask(
    text: str = "hi",
    *,
    tools: list[ToolSpec] | None = None,
    response_schema: dict[str, Any] | None = None,
    response_schema_name: str = "response",
) -> ModelRequest:
    """A one-message request."""
    return ModelRequest(
        messages=[Message(role="system", content="Be brief."), Message(role="user", content=text)],
        tools=tools or [],
        response_schema=response_schema,
        response_schema_name=response_schema_name,
    )


async def collect(model: Model, request: ModelRequest) -> list[ModelEvent]:
    """Every event the model streams for ``request``."""
    return [event async for event in model.stream(request)]
