"""Models: the ``Model`` protocol, ``ScriptedModel`` for tests, the OpenAI adapter.

Example:
    >>> from agents.models import OpenAIModel, ScriptedModel, call, reply
    >>> model = ScriptedModel([call("delete_record", {"id": "abc-123"}), reply("Done.")])
    >>> from openai import AsyncOpenAI
    >>> real = OpenAIModel(DEFAULT_OPENAI_MODEL, client=AsyncOpenAI(api_key=settings.key))
"""

from typing import TYPE_CHECKING

from agents.errors import ModelError, ScriptExhausted
from agents.models._base import (
    DEFAULT_OPENAI_MODEL,
    Model,
    ModelEvent,
    ModelRequest,
    ObjectOutput,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from agents.models._scripted import (
    Call,
    Calls,
    Obj,
    Reply,
    ScriptedModel,
    ScriptItem,
    call,
    calls,
    obj,
    reply,
)

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "Call",
    "Calls",
    "Model",
    "ModelError",
    "ModelEvent",
    "ModelRequest",
    "Obj",
    "ObjectOutput",
    "OpenAIModel",
    "Reply",
    "ScriptExhausted",
    "ScriptItem",
    "ScriptedModel",
    "TextDelta",
    "ToolCallRequest",
    "Usage",
    "call",
    "calls",
    "obj",
    "reply",
    "resolve_model",
]

if TYPE_CHECKING:
    from agents.models._openai import OpenAIModel, resolve_model


def __getattr__(name: str) -> object:
    """Import the OpenAI adapter (and the ``openai`` package) only when it is used."""
    if name in ("OpenAIModel", "resolve_model"):
        from agents.models import _openai

        return getattr(_openai, name)
    raise AttributeError(f"module 'agents.models' has no attribute {name!r}")
