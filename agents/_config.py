"""Checking what an ``Agent`` is built with, and small JSON helpers."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from agents._fingerprint import strict_canonical_json
from agents._messages import ToolCallPart
from agents.errors import AgentConfigError, InvalidToolArgs
from agents.models._base import Model
from tools import Tool

DELEGATION_PREFIX = "agent-"
"""Sub-agent ``key`` is offered to the model as the tool ``agent-<key>``."""

OPTION_NAMES = frozenset(
    {
        "auto_resume_suspended_tools",
        "require_tool_approval",
        "max_steps",
        "request_context",
        "approval_ttl_seconds",
    }
)
DEFAULT_MAX_STEPS = 8

_STRICT_JSON = json.JSONEncoder(allow_nan=False, ensure_ascii=False)
"""``strict_json_args``'s encoder for keys that cannot be sorted, built once (``json.dumps``
with options builds one per call)."""


def resolve_model(model: Model | str) -> Model:
    if isinstance(model, str):
        from agents.models import resolve_model as resolve

        return resolve(model)
    return model


def tool_map(tools: Mapping[str, Tool] | Sequence[Tool] | None) -> dict[str, Tool]:
    """Tools by the name the model sees (dict keys, or each tool's id)."""
    if tools is None:
        return {}
    mapping = dict(tools) if isinstance(tools, Mapping) else {t.id: t for t in tools}
    for name, tool in mapping.items():
        if not isinstance(tool, Tool):
            raise AgentConfigError(
                f"tool {name!r} is {type(tool).__name__}; build it with create_tool()"
            )
        if name.startswith(DELEGATION_PREFIX):
            raise AgentConfigError(
                f"tool name {name!r} is reserved for sub-agents ('agent-<key>'); rename it"
            )
    return mapping


def check_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - OPTION_NAMES
    if unknown:
        raise AgentConfigError(
            f"unknown default_options {sorted(unknown)}; known: {sorted(OPTION_NAMES)}"
        )
    check_ttl(options.get("approval_ttl_seconds"))
    return options


def check_ttl(ttl: float | None) -> float | None:
    """An approval TTL in seconds (0 or more), or None for no expiry."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl >= 0:
        raise AgentConfigError(
            f"approval_ttl_seconds must be a number of seconds, 0 or more, got {ttl!r}"
        )
    return float(ttl)


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data (anything unknown becomes its string)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return {}


def validation_errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
        for e in exc.errors(include_url=False)
    ]


def check_lease(seconds: float) -> float:
    """A claim lease in seconds (1 or more)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 1:
        raise AgentConfigError(
            f"claim_lease_seconds must be a number of seconds, at least 1, got {seconds!r}"
        )
    return float(seconds)


def strict_json_args(call: ToolCallPart) -> str | None:
    """Refuse a model's tool arguments that are not strict JSON (NaN, Infinity, a lone
    surrogate): they could not be stored, shown or fingerprinted faithfully.

    Returns their canonical JSON, for the call's fingerprint (encoded once), or None when their
    keys cannot be sorted (keys of mixed types: the check itself does not sort).
    """
    try:
        try:
            checked = strict_canonical_json(call.args)
            encoded: str | None = checked
        except TypeError:  # keys of mixed types cannot be sorted; the check does not sort
            encoded = None
            checked = _STRICT_JSON.encode(call.args)
        checked.encode("utf-8")
    except (ValueError, UnicodeEncodeError) as exc:
        raise InvalidToolArgs(
            call.id, [{"loc": [], "msg": _why(exc), "type": "json_invalid"}], from_model=True
        ) from None
    return encoded


def _why(exc: Exception) -> str:
    if isinstance(exc, UnicodeEncodeError):
        return "a string holds a lone surrogate (not valid Unicode)"
    return "a number is NaN or Infinity (not valid JSON)"
