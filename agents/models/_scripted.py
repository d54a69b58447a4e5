"""``ScriptedModel``: a deterministic model for tests and demos."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from agents.errors import ScriptExhausted
from agents.models._base import (
    ModelEvent,
    ModelRequest,
    ObjectOutput,
    TextDelta,
    ToolCallRequest,
    Usage,
)


@dataclass(frozen=True)
class Reply:
    """Answer with text."""

    text: str


@dataclass(frozen=True)
class Call:
    """Call one tool."""

    name: str
    args: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Calls:
    """Call several tools in one turn (parallel tool calls)."""

    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Obj:
    """Answer a structured-output request with this value."""

    value: Any


_ITEMS = (Reply, Call, Calls, Obj)
"""The script items that are answers (any other callable item is called to get one)."""

ScriptItem = Union[Reply, Call, Calls, Obj, Callable[[ModelRequest], "ScriptItem"]]  # noqa: UP007


def reply(text: str) -> Reply:
    """A script item: the model answers ``text``."""
    return Reply(text)


def call(name: str, args: dict[str, Any] | None = None, id: str | None = None) -> Call:
    """A script item: the model calls tool ``name`` with ``args``."""
    return Call(name, dict(args or {}), id)


def calls(*items: Call) -> Calls:
    """A script item: the model calls several tools in one turn."""
    return Calls(tuple(items))


def obj(value: Any) -> Obj:
    """A script item: the answer to a structured-output request."""
    return Obj(value)


class ScriptedModel:
    """Plays a script: each model request consumes one item.

    Example:
        >>> from agents.models import ScriptedModel, call, reply
        >>> model = ScriptedModel([call("delete_record", {"id": "abc-123"}), reply("Done.")])
    """

    def __init__(self, script: Sequence[ScriptItem], *, model_id: str = "scripted") -> None:
        self._script = list(script)
        self._position = 0
        self._model_id = model_id
        self._ids = itertools.count(1)
        self.requests: list[ModelRequest] = []
        """Every request received, in order (``.messages``, ``.tools``, ``.response_schema``)."""

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def remaining(self) -> int:
        """How many script items are left."""
        return len(self._script) - self._position

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if self._position >= len(self._script):
            raise ScriptExhausted(
                f"ScriptedModel was asked for answer {self._position + 1} but its script has "
                f"{len(self._script)} items; add items to the script"
            )
        item = self._script[self._position]
        self._position += 1
        while callable(item) and not isinstance(item, _ITEMS):
            item = item(request)
        for event in self._events(item):
            yield event
        yield Usage(input_tokens=sum(len(m.content or "") for m in request.messages) // 4)

    def _events(self, item: ScriptItem) -> list[ModelEvent]:
        if isinstance(item, Reply):
            words = item.text.split(" ")
            return [TextDelta(w if i == 0 else " " + w) for i, w in enumerate(words) if item.text]
        if isinstance(item, Call):
            return [self._call_event(item)]
        if isinstance(item, Calls):
            return [self._call_event(c) for c in item.calls]
        if isinstance(item, Obj):
            return [ObjectOutput(item.value)]
        raise TypeError(f"unknown script item {item!r}: use reply(), call(), calls() or obj()")

    def _call_event(self, item: Call) -> ToolCallRequest:
        return ToolCallRequest(item.id or f"call_{next(self._ids)}", item.name, dict(item.args))
