"""Shared helpers for runtime tests: recording tools and an in-memory store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from storage import InMemoryStorage
from tools import Tool, ToolContext, create_tool


class RecordInput(BaseModel):
    id: str


class RefundInput(BaseModel):
    order: int
    amount: float


class Executions:
    """Records every real execution of a tool (the thing approvals must guard)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def of(self, tool_id: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == tool_id]


@pytest.fixture
def executions() -> Executions:
    return Executions()


@pytest.fixture
def store() -> InMemoryStorage:
    return InMemoryStorage()


@pytest.fixture
def make_tool(executions: Executions) -> Callable[..., Tool]:
    def factory(
        tool_id: str = "delete-record",
        *,
        input_schema: type[BaseModel] = RecordInput,
        require_approval: Any = False,
        result: Any = None,
    ) -> Tool:
        async def execute(input: BaseModel, ctx: ToolContext) -> Any:
            executions.calls.append((tool_id, input.model_dump()))
            return result if result is not None else {"ok": True, **input.model_dump()}

        return create_tool(
            id=tool_id,
            description=f"{tool_id} tool",
            input_schema=input_schema,
            execute=execute,
            require_approval=require_approval,
        )

    return factory
