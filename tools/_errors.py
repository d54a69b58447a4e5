"""Errors raised by tools and their context.

ToolError
├── ToolDefinitionError   create_tool was given something it cannot use
├── ToolInputError        the arguments do not match the input schema
├── ToolOutputError       the result does not match the output schema / is not JSON
└── InvalidSuspendPayload suspend() was called with a payload its suspend_schema rejects
"""

from __future__ import annotations


class ToolError(Exception):
    """Root of every error raised by the ``tools`` package."""


class ToolDefinitionError(ToolError):
    """``create_tool`` was called with arguments it cannot use."""


class ToolInputError(ToolError):
    """The arguments of a call do not validate against the tool's input schema."""

    def __init__(self, tool_id: str, errors: list[dict[str, object]]) -> None:
        self.tool_id = tool_id
        self.errors = errors
        super().__init__(f"arguments for tool {tool_id!r} are invalid: {_summary(errors)}")


class ToolOutputError(ToolError):
    """A tool returned something its output schema (or JSON) rejects."""


class InvalidSuspendPayload(ToolError):
    """``ctx.suspend(payload)`` got a payload that does not match the tool's ``suspend_schema``."""

    def __init__(self, tool_id: str, errors: list[dict[str, object]]) -> None:
        self.tool_id = tool_id
        self.errors = errors
        super().__init__(
            f"tool {tool_id!r} tried to suspend with an invalid payload ({_summary(errors)}); "
            "fix the payload to match the tool's suspend_schema"
        )


def _summary(errors: list[dict[str, object]]) -> str:
    parts = []
    for error in errors[:5]:
        raw = error.get("loc")
        path = raw if isinstance(raw, list | tuple) else ()
        loc = ".".join(str(p) for p in path) or "(root)"
        parts.append(f"{loc}: {error.get('msg')}")
    return "; ".join(parts)
