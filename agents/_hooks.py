"""``Hooks``: code that runs around every tool execution."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agents._results import _ItemAccess


@dataclass(frozen=True, kw_only=True)
class ToolCallInfo(_ItemAccess):
    """What a hook sees about the call about to run (or that just ran)."""

    tool_name: str
    input: dict[str, Any]
    tool_call_id: str
    run_id: str
    request_context: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    """Set for ``after_tool_call``."""


HookFn = Callable[[ToolCallInfo], Any | Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class Hooks:
    """Callbacks around tool execution (sync or async).

    ``before_tool_call(info)`` runs after approval, just before ``execute``; returning
    ``{"proceed": False, "output": ...}`` skips the tool and makes ``output`` its result.
    ``after_tool_call(info)`` sees ``info.result``.

    Example:
        >>> def block_prod(info):
        ...     if info.input.get("env") == "prod":
        ...         return {"proceed": False, "output": {"error": "prod is frozen"}}
        >>> hooks = Hooks(before_tool_call=block_prod)
    """

    before_tool_call: HookFn | None = None
    after_tool_call: HookFn | None = None


async def call_hook(hook: HookFn | None, info: ToolCallInfo) -> Any:
    """Run a hook, awaiting it when it is async."""
    if hook is None:
        return None
    outcome = hook(info)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome
