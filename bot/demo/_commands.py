"""``/call <tool> key=value …``: the offline model's plain command syntax.

It lets a person call any tool the agent offers, their own agent's included, without a model
or a key (``MODEL=offline``), so the approval a tool needs is seen at once:

- ``/call delete-record id=abc-123`` → ``delete-record {"id": "abc-123"}``;
- values follow the tool's input schema: ``amount=250`` is a number where the schema asks for
  one and the text "250" where it asks for text; ``note="two words"`` (or single quotes) is
  text with spaces; lists and objects are written as JSON (``ids=[1, 2]``);
- ``/call refund {"order": 7, "amount": 250}`` passes one JSON object as it is;
- ``/call`` alone (or a mistake) lists the tools with their arguments.

Example:
    >>> parse_call("/call delete-record id=42", {"delete-record": {"properties": {}}})
    ('delete-record', {'id': 42})
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import bot.demo._text as text

COMMAND = "/call"
"""What a message starts with to call a tool by name."""

_COMMAND = re.compile(rf"^\s*{re.escape(COMMAND)}(?:\s+|$)(.*)$", re.S)

Schemas = Mapping[str, dict[str, Any]]
"""The tools offered, by name: each one's input JSON schema."""


def is_command(message: str) -> bool:
    """Whether ``message`` is a ``/call`` command."""
    return _COMMAND.match(message) is not None


def parse_call(message: str, tools: Schemas) -> tuple[str, dict[str, Any]] | str:
    """The call a ``/call`` message asks for, or what to say instead (a mistake, or the
    list of tools when none is named)."""
    match = _COMMAND.match(message)
    rest = match.group(1).strip() if match else ""
    if not rest:
        return usage(tools)
    name, _, given = rest.partition(" ")
    if name not in tools:
        return text.NO_SUCH_TOOL.format(tool=name) + "\n" + usage(tools)
    given = given.strip()
    if given.startswith("{"):
        try:
            whole = json.loads(given)
        except ValueError as exc:
            return text.BAD_JSON.format(tool=name, error=exc)
        if not isinstance(whole, dict):
            return text.BAD_JSON.format(tool=name, error="not an object")
        return name, whole
    pairs = _pairs(given)
    if isinstance(pairs, str):
        return text.NOT_KEY_VALUE.format(word=pairs, example=_example(name, tools[name]))
    properties = tools[name].get("properties") or {}
    args: dict[str, Any] = {}
    for key, raw in pairs:
        try:
            args[key] = _value(raw, properties.get(key) or {})
        except ValueError as exc:
            return text.BAD_ARGUMENTS.format(tool=name, key=key, error=exc)
    return name, args


_KEY = re.compile(r"\s*([A-Za-z_][\w.-]*)=")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')
_CLOSING = {"[": "]", "{": "}"}


def _pairs(given: str) -> list[tuple[str, str]] | str:
    """``key=value`` pairs as written (a value quoted, bracketed or up to the next space), or
    the word that is not one."""
    pairs, at = [], 0
    while at < len(given.rstrip()):
        key = _KEY.match(given, at)
        if key is None:
            return given[at:].split()[0]
        at = key.end()
        end = _value_end(given, at)
        pairs.append((key.group(1), given[at:end]))
        at = end
    return pairs


def _value_end(given: str, at: int) -> int:
    """Where the value starting at ``at`` ends: after its closing quote or bracket (an open
    one runs to the end, and fails to parse), else at the next space."""
    quoted = _QUOTED.match(given, at)
    if quoted:
        return quoted.end()
    if at < len(given) and given[at] in _CLOSING:
        depth, inside = 0, None
        for index in range(at, len(given)):
            char = given[index]
            if inside:
                inside = None if char == inside and given[index - 1] != "\\" else inside
            elif char in "\"'":
                inside = char
            elif char in "[{":
                depth += 1
            elif char in "]}":
                depth -= 1
                if depth == 0:
                    return index + 1
        return len(given)
    space = given.find(" ", at)
    return len(given) if space < 0 else space


def usage(tools: Schemas) -> str:
    """How to call each offered tool (``/call refund order=… amount=…``)."""
    if not tools:
        return text.NO_TOOLS
    lines = [text.USAGE]
    lines += [f"• {_example(name, schema)}" for name, schema in sorted(tools.items())]
    return "\n".join(lines)


def _example(name: str, schema: dict[str, Any]) -> str:
    keys = list((schema.get("properties") or {}).keys())
    return " ".join([COMMAND, name, *(f"{key}=…" for key in keys)])


def _value(raw: str, schema: dict[str, Any]) -> Any:
    """A value as written: quoted is text, bracketed is JSON; a bare word is text where the
    schema asks for text, else JSON when it parses (``12.5``, ``true``), else text."""
    if raw[:1] == "'" and raw[-1:] == "'" and len(raw) > 1:
        return raw[1:-1]
    if raw[:1] == '"':
        return json.loads(raw)
    if raw[:1] in _CLOSING:
        return json.loads(raw)
    if _types(schema) == {"string"}:
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property allows (``anyOf`` included; ``null`` left out)."""
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for option in schema.get("anyOf") or []:
        if isinstance(option, dict):
            found |= _types(option)
    return found - {"null"}
