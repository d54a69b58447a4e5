"""Our messages and tools in the Chat Completions wire format, and streamed tool calls put back
together.

Tool-call fragments arrive keyed by ``index``: the first fragment of a call carries its ``id``
and function ``name``, later ones carry pieces of the ``arguments`` JSON; several parallel calls
may interleave. :class:`ToolCallAssembler` collects them and builds complete calls at the end.

Malformed arguments (not a JSON object) raise ``ModelError`` rather than producing a call with
made-up arguments: for a countersign tool, running or asking a person to approve arguments the
model never actually produced is worse than a failed turn, which the run reports as an ``error``
chunk and which can be retried.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall
from openai.types.chat.completion_create_params import ResponseFormat

from agents._messages import Message, ToolSpec
from agents.errors import ModelError
from agents.models._base import ToolCallRequest
from agents.models._openai_schema import drop_injected_nulls, prepare_schema


def to_openai_messages(messages: Sequence[Message]) -> list[ChatCompletionMessageParam]:
    """Map our provider-neutral messages to Chat Completions message params."""
    return [_message(m) for m in messages]


def _message(message: Message) -> ChatCompletionMessageParam:
    content = message.content or ""
    if message.role == "system":
        return {"role": "system", "content": content}
    if message.role == "user":
        return {"role": "user", "content": content}
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content}
    if not message.tool_calls:
        return {"role": "assistant", "content": content}
    return {
        "role": "assistant",
        "content": message.content,
        "tool_calls": [
            {
                "id": part.id,
                "type": "function",
                "function": {"name": part.name, "arguments": compact_json(part.args)},
            }
            for part in message.tool_calls
        ],
    }


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[ChatCompletionToolParam]:
    """Function tools, with schemas made strict-mode compatible where possible."""
    params: list[ChatCompletionToolParam] = []
    for tool in tools:
        schema, strict = prepare_schema(tool.parameters)
        params.append(
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": schema,
                    "strict": strict,
                },
            }
        )
    return params


def to_response_format(schema: dict[str, Any], name: str) -> ResponseFormat:
    """The ``response_format`` asking for one JSON object valid against ``schema``."""
    prepared, strict = prepare_schema(schema)
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": prepared, "strict": strict},
    }


def compact_json(value: Any) -> str:
    """JSON without spaces, as the API sends arguments itself."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class _PartialCall:
    id: str | None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAssembler:
    """Collects streamed tool-call fragments; :meth:`finish` returns the complete calls."""

    def __init__(self) -> None:
        self._calls: list[_PartialCall] = []
        self._by_index: dict[int, _PartialCall] = {}

    def add(self, fragment: ChoiceDeltaToolCall) -> None:
        """Add one fragment; a new ``id`` at a used ``index`` starts a new call (some
        OpenAI-compatible servers reuse index 0 for every call)."""
        current = self._by_index.get(fragment.index)
        if current is None or (fragment.id and current.id and fragment.id != current.id):
            current = _PartialCall(id=fragment.id)
            self._by_index[fragment.index] = current
            self._calls.append(current)
        elif fragment.id and not current.id:
            current.id = fragment.id
        if fragment.function is not None:
            if fragment.function.name:
                current.name += fragment.function.name
            if fragment.function.arguments:
                current.arguments.append(fragment.function.arguments)

    def finish(
        self, schemas: Mapping[str, dict[str, Any]], finish_reason: str | None
    ) -> list[ToolCallRequest]:
        """The assembled calls, arguments parsed (and strict-mode nulls dropped per ``schemas``).

        Raises ``ModelError`` when a call has no name or its arguments are not a JSON object.
        """
        return [self._complete(call, schemas, finish_reason) for call in self._calls]

    @staticmethod
    def _complete(
        call: _PartialCall, schemas: Mapping[str, dict[str, Any]], finish_reason: str | None
    ) -> ToolCallRequest:
        call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
        if not call.name:
            raise ModelError(f"the model sent tool call {call_id!r} without a function name")
        text = "".join(call.arguments).strip()
        try:
            args = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            cut = (
                " (the answer was cut off: finish_reason=length)"
                if finish_reason == "length"
                else ""
            )
            raise ModelError(
                f"the model sent malformed JSON arguments for tool {call.name!r} (call "
                f"{call_id!r}){cut}: {exc.msg} at position {exc.pos}; nothing was run, "
                "retry the run"
            ) from None
        if not isinstance(args, dict):
            raise ModelError(
                f"the model sent arguments for tool {call.name!r} (call {call_id!r}) that are a "
                f"JSON {type(args).__name__}, not an object; nothing was run, retry the run"
            )
        schema = schemas.get(call.name)
        if schema is not None:
            args = drop_injected_nulls(args, schema)
        return ToolCallRequest(call_id, call.name, args)
