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

The built-in example tools (``DemoDB``, ``record_tools``, ``refund_tools``, ``ticket_tools``)
live in ``tools.examples`` and are imported on first use (they pull in SQLAlchemy).
"""

from typing import TYPE_CHECKING, Any

from tools._context import ApprovalContext, Suspended, ToolContext
from tools._errors import (
    InvalidSuspendPayload,
    ToolDefinitionError,
    ToolError,
    ToolInputError,
    ToolOutputError,
)
from tools._tool import ApprovalPredicate, Tool, create_tool, either, evaluate_predicate

if TYPE_CHECKING:
    from tools.examples import DemoDB, record_tools, refund_tools, ticket_tools

__all__ = [
    "ApprovalContext",
    "ApprovalPredicate",
    "DemoDB",
    "InvalidSuspendPayload",
    "Suspended",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolError",
    "ToolInputError",
    "ToolOutputError",
    "create_tool",
    "either",
    "evaluate_predicate",
    "record_tools",
    "refund_tools",
    "ticket_tools",
]

_EXAMPLES = ("DemoDB", "record_tools", "refund_tools", "ticket_tools")


def __getattr__(name: str) -> Any:
    """Import the example tools only when first asked for."""
    if name in _EXAMPLES:
        from tools import examples

        return getattr(examples, name)
    raise AttributeError(f"module 'tools' has no attribute {name!r}")
