"""Reading a TOML file (the policy file, the API tokens file) and telling its mistakes in TOML
words: where the mistake is ("rule 2: tools"), what is wrong and how to write it, never
pydantic's "Input should be a valid tuple"."""

from __future__ import annotations

import gc
import json
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: reading and compiling a file of thousands of rules
    makes hundreds of thousands of objects that all live on, and each collection on the way
    walks all of them again (about a third of the start-up time of 20,000 rules)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def toml_file(path: Path, what: str, variable: str) -> dict[str, Any] | list[str]:
    """The TOML data in ``path``, or the one line saying why it cannot be read (``what`` names
    the file, ``variable`` the setting that points to it)."""
    try:
        with gc_paused():
            return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return [f"{path}: cannot read the {what} ({exc.strerror or exc}); check {variable}"]
    except UnicodeDecodeError:
        return [f"{path}: the {what} is not UTF-8 text"]
    except tomllib.TOMLDecodeError as exc:
        return [f"{path}: not valid TOML: {exc}"]


def problem_lines(path: Path, error: ValidationError) -> list[str]:
    """One line per validation error: the file, where (``rule 2: approvals: ``), what, in
    words a person writing TOML knows (never pydantic's "Input should be a valid tuple").

    A list whose items are wrong is not also reported as empty (pydantic counts only the
    items that validated)."""
    errors = error.errors(include_url=False)
    inner = [e["loc"] for e in errors]
    return [
        f"{path}: {_where(e['loc'])}{_what(e)}"
        for e in errors
        if not (e["type"] == "too_short" and _has_wrong_items(e["loc"], inner))
    ]


def _has_wrong_items(loc: tuple[int | str, ...], others: list[tuple[int | str, ...]]) -> bool:
    return any(len(other) > len(loc) and other[: len(loc)] == loc for other in others)


_SECTIONS = {"rules": "rule", "mcp_servers": "mcp_servers entry", "tokens": "token"}


def _where(loc: tuple[int | str, ...]) -> str:
    """``rule 2: approvals: `` from ``("rules", 1, "approvals")``."""
    parts = list(loc)
    if not parts:
        return ""
    head = parts.pop(0)
    if head in _SECTIONS and parts and isinstance(parts[0], int):
        place = f"{_SECTIONS[str(head)]} {int(parts.pop(0)) + 1}: "
    elif head in ("defaults", "gateway"):
        place = f"[{head}]: "
    else:
        return f"{'.'.join(map(str, loc))}: "
    return place + (f"{'.'.join(map(str, parts))}: " if parts else "")


def _what(error: Any) -> str:
    kind, given = error["type"], error.get("input")
    if kind == "policy":
        return str(error["msg"])
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):
        return "unknown key"
    if kind == "missing":
        return "missing (required)"
    pattern = str(error.get("ctx", {}).get("pattern"))
    if kind == "string_pattern_mismatch" and "UWS" in pattern:
        return f"{given!r} is not a Slack user (U…/W…) or user-group (S…) id"
    if kind == "string_pattern_mismatch" and "[UW]" in pattern:
        return f"{given!r} is not a Slack user id (U…/W…)"
    if kind == "string_pattern_mismatch" and "{64}" in pattern:  # never echo a token
        return "must be the 64 hex digits of the token's SHA-256 (never the token itself)"
    if kind == "int_type":
        return f"must be a whole number, got {given!r}"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty"
    if kind == "greater_than_equal":
        return f"must be at least {error['ctx']['ge']}, got {given!r}"
    if kind == "less_than_equal":
        return f"must be at most {error['ctx']['le']}, got {given!r}"
    return _in_toml_words(kind, _key(error["loc"]), given, pattern, error)


def _key(loc: tuple[int | str, ...]) -> str:
    """The key a value was written under (``escalate`` for ``escalate.0``)."""
    return next((str(part) for part in reversed(loc) if isinstance(part, str)), "")


_TABLES = {
    "defaults": "a [defaults] section of key = value lines",
    "args_above": "a table in braces: args_above = { amount = 1000 }",
    "grants": "a table in braces: grants = { max_seconds = 3600, max_uses = 20 }",
    "escalate": 'a table in braces: { after = "15m", notify = ["S0ONCALL"] }',
    "env": 'a table in braces: env = { NAME = "value" }',
    "headers": 'a table in braces: headers = { Authorization = "Bearer ${TOKEN}" }',
}
"""What each table-valued key looks like, for "must be a table" (by the key it is under)."""
_LISTS_OF_TABLES = {
    "rules": "one [[rules]] section per rule",
    "mcp_servers": "one [[mcp_servers]] section per server",
    "tokens": "one [[tokens]] section per token",
    "escalate": 'a list of tables: escalate = [{ after = "15m", notify = ["S0ONCALL"] }]',
}
"""What each key holding a list of tables looks like."""
_PATTERNS = {
    "^https?://": "must start with http:// or https://",
    "^[A-Za-z0-9][A-Za-z0-9_-]*$": (
        "may hold only letters, digits, - and _, and must start with a letter or digit"
    ),
}


def _in_toml_words(kind: str, key: str, given: object, pattern: str, error: Any) -> str:
    """The problems pydantic words for Python programmers ("Input should be a valid tuple"),
    worded for a person writing the TOML file."""
    if kind in ("tuple_type", "list_type", "set_type", "frozen_set_type"):
        if key in _LISTS_OF_TABLES:
            return f"must be {_LISTS_OF_TABLES[key]}, got {given!r}"
        if isinstance(given, str):
            items = given.split() if key == "command" else [given]
            listed = ", ".join(json.dumps(item, ensure_ascii=False) for item in items)
            return f"must be a list in brackets: {key} = [{listed}], got {given!r}"
        return f'must be a list in brackets, e.g. {key} = ["a", "b"], got {given!r}'
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false (without quotes), got {given!r}"
    if kind in ("dict_type", "model_type", "model_attributes_type", "dataclass_type"):
        table = _TABLES.get(key, "a table in braces: { key = value }")
        return f"must be {table}, got {given!r}"
    if kind in ("string_type", "string_sub_type"):
        return f"must be text in quotes, got {given!r}"
    if kind in ("float_type", "float_parsing", "int_parsing", "int_from_float", "finite_number"):
        return f"must be a number (without quotes), got {given!r}"
    if kind == "greater_than":
        return f"must be more than {error['ctx']['gt']}, got {given!r}"
    if kind == "string_pattern_mismatch" and pattern in _PATTERNS:
        return f"{_PATTERNS[pattern]}, got {given!r}"
    return f"{str(error['msg']).removeprefix('Value error, ')}, got {given!r}"
