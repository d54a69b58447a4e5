"""Tools an agent can call: ``create_tool`` and the ``ToolContext`` every call receives.

Example:
    >>> from pydantic import BaseModel
    >>> from tools import create_tool, ToolContext
    >>> class DeleteInput(BaseModel):
    ...     id: str
    >>> async def delete_record(input: DeleteInput, ctx: ToolContext) -> dict:
    ...     return {"deleted": input.id}
    >>> delete_tool = create_tool(id="delete-record", description="Delete a record by ID",
    ...                           input_schema=DeleteInput, execute=delete_record,
    ...                           require_approval=True)
"""

from tools._context import ApprovalContext, Suspended, ToolContext
from tools._errors import (
    InvalidSuspendPayload,
    ToolDefinitionError,
    ToolError,
    ToolInputError,
    ToolOutputError,
)
from tools._tool import ApprovalPredicate, Tool, create_tool, evaluate_predicate

__all__ = [
    "ApprovalContext",
    "ApprovalPredicate",
    "InvalidSuspendPayload",
    "Suspended",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOutputError",
    "create_tool",
    "evaluate_predicate",
]
