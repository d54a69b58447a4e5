"""Example tools on the demo records: list, show, delete (deleting needs approval)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import delete, select

from tools._context import ToolContext
from tools._demo_db import DemoDB, records
from tools._tool import Tool, create_tool


class ListRecordsInput(BaseModel):
    """Arguments of ``list-records``."""

    limit: int = Field(default=10, ge=1, le=50, description="How many records to show")
    offset: int = Field(default=0, ge=0, description="How many records to skip")


class RecordInput(BaseModel):
    """Arguments of ``get-record`` and ``delete-record``."""

    id: int = Field(description="The record's id")


def record_tools(db: DemoDB) -> list[Tool]:
    """``list-records``, ``get-record`` and ``delete-record`` (requires approval) on ``db``."""

    async def list_records(input: ListRecordsInput, ctx: ToolContext) -> dict[str, Any]:
        async with await db.connect() as conn:
            rows = await conn.execute(
                select(records).order_by(records.c.id).limit(input.limit).offset(input.offset)
            )
            items = [dict(row._mapping) for row in rows]
        return {"records": items, "total": await db.count(records)}

    async def get_record(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        async with await db.connect() as conn:
            row = (await conn.execute(select(records).where(records.c.id == input.id))).first()
        if row is None:
            return {"found": False, "id": input.id}
        return {"found": True, "record": dict(row._mapping)}

    async def delete_record(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        async with await db.connect() as conn:
            row = (await conn.execute(select(records).where(records.c.id == input.id))).first()
            await conn.execute(delete(records).where(records.c.id == input.id))
            await conn.commit()
        if row is None:
            return {"deleted": False, "id": input.id, "reason": "no such record"}
        return {"deleted": True, "id": input.id, "name": row._mapping["name"]}

    return [
        create_tool(
            id="list-records",
            title="List records",
            description="List records (id, name, kind), oldest first",
            input_schema=ListRecordsInput,
            execute=list_records,
        ),
        create_tool(
            id="get-record",
            title="Show a record",
            description="Show one record by id",
            input_schema=RecordInput,
            execute=get_record,
        ),
        create_tool(
            id="delete-record",
            title="Delete a record",
            description="Delete a record by id (a person must approve)",
            input_schema=RecordInput,
            execute=delete_record,
            require_approval=True,
            idempotent=True,
        ),
    ]
