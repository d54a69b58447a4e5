"""``create_tool`` and the ``Tool`` it returns."""

from __future__ import annotations

import asyncio
import copy
import functools
import hashlib
import inspect
import json
import pickle
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tools._context import ApprovalContext, Suspended, ToolContext, _errors
from tools._errors import ToolDefinitionError, ToolInputError, ToolOutputError

ApprovalPredicate = Callable[[ApprovalContext], bool | Awaitable[bool]]
"""Sync or async ``(ApprovalContext) -> bool``: True means the call needs approval."""

Execute = Callable[[Any, ToolContext], Any]
"""``async def (input, ctx)`` (or a plain def, run in a worker thread)."""

_JSON = TypeAdapter(Any)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""Sorted keys, no spaces, UTF-8 kept as is: the JSON a ``definition_digest`` hashes."""


@functools.lru_cache(maxsize=512)
def _schema_pickle(model: type[BaseModel]) -> bytes:
    # Generating a schema takes ~1 ms; a run asks for every tool's at every model turn. Kept as
    # plain JSON data, pickled: unpickling hands out a fresh deep copy at half the cost of
    # parsing the JSON text.
    return pickle.dumps(json.loads(json.dumps(model.model_json_schema())))


def _json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    result: dict[str, Any] = pickle.loads(_schema_pickle(model))  # bytes we pickled ourselves
    return result


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool an agent can call. Build one with ``create_tool``."""

    id: str
    """Stable identifier; the name the model sees when tools are given as a list."""
    description: str
    """What the tool does, shown to the model."""
    input_schema: type[BaseModel]
    """Pydantic model of the arguments; its JSON schema is what the model sees."""
    execute: Execute
    """The implementation."""
    output_schema: type[BaseModel] | None = None
    """Optional pydantic model the result is validated against."""
    suspend_schema: type[BaseModel] | None = None
    """Optional pydantic model ``ctx.suspend()`` payloads are validated against."""
    resume_schema: type[BaseModel] | None = None
    """Optional pydantic model resume data is validated against."""
    require_approval: bool | ApprovalPredicate = False
    """True, or a predicate: when it holds, the call waits for a person before running."""
    idempotent: bool = False
    """True when running twice with one ``idempotency_key`` is safe (retried after a crash)."""
    title: str | None = None
    """The human name approval cards show ("Delete a record"); None: cards use the description."""
    approvals: int = 1
    """Distinct approvers a gated call needs before it runs (2 = the two-person rule)."""
    grants: bool = False
    """True: approving a call of it may create a standing grant (SPEC 15) when no policy rule
    matches the call (a matching rule's ``grants`` decides otherwise)."""
    json_schema: dict[str, Any] | None = field(default=None, hash=False)
    """A JSON schema the model sees instead of ``input_schema``'s, for tools whose schema comes
    from elsewhere (an MCP server's ``inputSchema``); None: the schema of ``input_schema``."""

    def parameters_schema(self) -> dict[str, Any]:
        """The JSON schema of the input, as sent to the model (a fresh copy each time)."""
        if self.json_schema is not None:
            return copy.deepcopy(self.json_schema)
        return _json_schema_of(self.input_schema)

    @functools.cached_property
    def shared_parameters_schema(self) -> dict[str, Any]:
        """``parameters_schema()`` built once per tool and shared by every model turn of every
        agent (a run offers every tool at every turn): READ ONLY. Model adapters only read a
        request's tools; one that needs to change a schema copies it (as the OpenAI adapter's
        strict-mode rewrite does)."""
        return self.parameters_schema()

    @functools.cached_property
    def definition_digest(self) -> str:
        """SHA-256 hex of the canonical JSON (sorted keys, no spaces, UTF-8) of what defines
        this tool for an approver: its id, description and input schema (for MCP tools also
        the server and the tool's annotations). Computed once per tool: a ``Tool`` is frozen,
        so a changed definition is a new ``Tool`` with a new digest.

        Example:
            >>> len(delete_tool.definition_digest)
            64
        """
        document = _CANONICAL.encode(self.definition())
        return hashlib.sha256(document.encode("utf-8")).hexdigest()

    def definition(self) -> dict[str, Any]:
        """What ``definition_digest`` hashes (JSON data; subclasses add what defines them)."""
        return {
            "description": self.description,
            "id": self.id,
            "input_schema": self.shared_parameters_schema,
        }

    def resume_json_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the resume data, or None."""
        return None if self.resume_schema is None else _json_schema_of(self.resume_schema)

    def parse_input(self, args: dict[str, Any]) -> BaseModel:
        """Validate arguments against the input schema (``ToolInputError`` when invalid)."""
        try:
            return self.input_schema.model_validate(args)
        except ValidationError as exc:
            raise ToolInputError(self.id, _errors(exc)) from None

    def parse_resume(self, data: Any) -> BaseModel | None:
        """Validate resume data against the resume schema (raises pydantic ``ValidationError``)."""
        if self.resume_schema is None:
            return None
        return self.resume_schema.model_validate(data)

    async def needs_approval(self, context: ApprovalContext) -> bool:
        """Evaluate ``require_approval``; a predicate that raises means approval is required."""
        return await evaluate_predicate(self.require_approval, context)

    @property
    def destructive(self) -> bool:
        """Whether the tool itself says it may destroy what it touches (an MCP server's
        annotations say so; a tool of ours says nothing: False)."""
        return False

    def approval_reason(self) -> str:
        """Why this tool's own ``require_approval`` holds a call, in words a card shows."""
        if self.require_approval is True:
            return f"{self.id} always needs approval"
        return f"{self.id}'s own rule asks for approval of these arguments"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Validate, execute and check the output; returns JSON-safe data or ``Suspended``."""
        parsed = self.parse_input(args)
        ctx.suspend_schema = self.suspend_schema
        ctx.tool_id = self.id
        if self._execute_is_async:
            result = await self.execute(parsed, ctx)
        else:
            result = await asyncio.to_thread(self.execute, parsed, ctx)
            if inspect.isawaitable(result):
                result = await result
        if ctx.suspended_with is not None:
            return Suspended(ctx.suspended_with)
        if isinstance(result, Suspended):
            return result
        return self._check_output(result)

    @functools.cached_property
    def _execute_is_async(self) -> bool:
        # Asked at every call; the answer never changes (a Tool is frozen).
        return inspect.iscoroutinefunction(self.execute)

    def _check_output(self, result: Any) -> Any:
        if self.output_schema is not None:
            try:
                result = self.output_schema.model_validate(
                    result.model_dump() if isinstance(result, BaseModel) else result
                )
            except ValidationError as exc:
                raise ToolOutputError(
                    f"tool {self.id!r} returned a result its output_schema rejects: {exc}"
                ) from None
        try:
            return _JSON.dump_python(result, mode="json")
        except Exception as exc:
            raise ToolOutputError(
                f"tool {self.id!r} returned {type(result).__name__}, which is not JSON-safe; "
                "return a dict, list, str, number, bool, None or a pydantic model"
            ) from exc


async def evaluate_predicate(
    requirement: bool | ApprovalPredicate | None, context: ApprovalContext
) -> bool:
    """True when ``requirement`` asks for approval; a raising predicate counts as True."""
    if requirement is None or isinstance(requirement, bool):
        return bool(requirement)
    try:
        verdict = requirement(context)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)
    except Exception:
        return True


def either(
    first: bool | ApprovalPredicate | None, second: bool | ApprovalPredicate | None
) -> bool | ApprovalPredicate:
    """A requirement that holds when either holds (booleans stay booleans)."""
    if first is None or first is False:
        return second if second is not None else False
    if second is None or second is False or first is True:
        return first
    if second is True:
        return True

    async def both(context: ApprovalContext) -> bool:
        return await evaluate_predicate(first, context) or await evaluate_predicate(second, context)

    return both


def create_tool(
    *,
    id: str,
    description: str,
    input_schema: type[BaseModel],
    execute: Execute,
    output_schema: type[BaseModel] | None = None,
    suspend_schema: type[BaseModel] | None = None,
    resume_schema: type[BaseModel] | None = None,
    require_approval: bool | ApprovalPredicate = False,
    idempotent: bool = False,
    title: str | None = None,
    approvals: int = 1,
    grants: bool = False,
) -> Tool:
    """Define a tool.

    Example:
        >>> from pydantic import BaseModel
        >>> class DeleteInput(BaseModel):
        ...     id: str
        >>> async def delete_record(input: DeleteInput, ctx: ToolContext) -> dict:
        ...     return {"deleted": input.id}
        >>> delete_tool = create_tool(id="delete-record", description="Delete a record by ID",
        ...                           input_schema=DeleteInput, execute=delete_record,
        ...                           require_approval=True)
    """
    if not id or not isinstance(id, str):
        raise ToolDefinitionError("create_tool needs a non-empty string id")
    for name, schema in (
        ("input_schema", input_schema),
        ("output_schema", output_schema),
        ("suspend_schema", suspend_schema),
        ("resume_schema", resume_schema),
    ):
        if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise ToolDefinitionError(
                f"tool {id!r}: {name} must be a pydantic BaseModel subclass, got {schema!r}"
            )
    if not callable(execute):
        raise ToolDefinitionError(f"tool {id!r}: execute must be a function (input, ctx)")
    if not (isinstance(require_approval, bool) or callable(require_approval)):
        raise ToolDefinitionError(
            f"tool {id!r}: require_approval must be a bool or a predicate (ApprovalContext)"
        )
    if isinstance(approvals, bool) or not isinstance(approvals, int) or approvals < 1:
        raise ToolDefinitionError(
            f"tool {id!r}: approvals must be a whole number of at least 1, got {approvals!r}"
        )
    return Tool(
        id=id,
        description=description,
        input_schema=input_schema,
        execute=execute,
        output_schema=output_schema,
        suspend_schema=suspend_schema,
        resume_schema=resume_schema,
        require_approval=require_approval,
        idempotent=idempotent,
        title=title,
        approvals=approvals,
        grants=grants,
    )
