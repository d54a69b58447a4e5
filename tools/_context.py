"""``ToolContext``: everything a running tool may know, and ``suspend()``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from tools._errors import InvalidSuspendPayload


@dataclass(frozen=True)
class Suspended:
    """The marker ``ctx.suspend()`` returns; a tool returns it to end its run early."""

    payload: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ApprovalContext:
    """What an approval predicate sees about the call it decides on."""

    tool_name: str
    """The name the model used for the tool."""
    args: dict[str, Any]
    """The arguments exactly as the model passed them."""
    request_context: dict[str, Any] = field(default_factory=dict)
    """The ``request_context`` given to ``stream()``/``generate()``."""


@dataclass(kw_only=True)
class ToolContext:
    """Passed to every ``execute`` as its second argument.

    Example:
        >>> async def ask(input, ctx: ToolContext):
        ...     if ctx.resume_data is None:
        ...         return await ctx.suspend({"question": "Which priority?"})
        ...     return {"priority": ctx.resume_data.priority}
    """

    run_id: str
    """The run this call belongs to."""
    tool_call_id: str
    """The model's id for this call."""
    agent_id: str
    """The agent running the tool."""
    thread_id: str | None = None
    """The memory thread of the run, when there is one."""
    resource_id: str | None = None
    """The resource (user, channel) of the run, when there is one."""
    request_context: dict[str, Any] = field(default_factory=dict)
    """Caller-supplied context (never shown to the model)."""
    resume_data: Any = None
    """The validated ``resume_schema`` instance this call was resumed with, or None."""
    suspend_payload: dict[str, Any] | None = None
    """What this call suspended with earlier, or None."""
    idempotency_key: str = ""
    """Stable for this tool call across retries and restarts; pass it to external APIs."""
    suspend_schema: type[BaseModel] | None = None
    """The tool's suspend schema (set by the runtime)."""
    tool_id: str = ""
    """The id of the tool being run (set by the runtime)."""
    suspended_with: dict[str, Any] | None = None
    """Set when the tool called ``suspend()`` during this execution."""

    async def suspend(self, payload: dict[str, Any] | BaseModel) -> Suspended:
        """Pause this call until someone resumes it with data; ``return await ctx.suspend(...)``.

        The payload is validated against the tool's ``suspend_schema`` (when it has one);
        an invalid payload raises ``InvalidSuspendPayload`` and nothing is suspended.
        """
        if isinstance(payload, BaseModel):
            payload = payload.model_dump(mode="json")
        if self.suspend_schema is not None:
            try:
                validated = self.suspend_schema.model_validate(payload)
            except ValidationError as exc:
                raise InvalidSuspendPayload(self.tool_id, _errors(exc)) from None
            payload = validated.model_dump(mode="json")
        self.suspended_with = dict(payload)
        return Suspended(self.suspended_with)


def _errors(exc: ValidationError) -> list[dict[str, object]]:
    return [
        {"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]}
        for e in exc.errors(include_url=False)
    ]
