"""Example tool on the demo tickets: open one, suspending to ask for a missing priority."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlalchemy import select

from tools._context import ToolContext
from tools._demo_db import DemoDB, tickets
from tools._tool import Tool, create_tool

Priority = Literal["low", "medium", "high"]


class TicketInput(BaseModel):
    """Arguments of ``open-ticket``."""

    title: str = Field(min_length=1, max_length=200, description="What the ticket is about")
    priority: Priority | None = Field(
        default=None, description="low, medium or high; leave it out when the user did not say"
    )


class PriorityQuestion(BaseModel):
    """What ``open-ticket`` asks when it suspends."""

    question: str
    options: list[str]


class PriorityAnswer(BaseModel):
    """The answer that resumes ``open-ticket``."""

    priority: Priority = Field(description="low, medium or high")


def ticket_tools(db: DemoDB) -> list[Tool]:
    """``open-ticket``: suspends to ask for the priority when it was not given."""

    async def open_ticket(input: TicketInput, ctx: ToolContext) -> Any:
        answer = ctx.resume_data
        priority = answer.priority if isinstance(answer, PriorityAnswer) else input.priority
        if priority is None:
            return await ctx.suspend(
                PriorityQuestion(
                    question=f"What priority should the ticket about {input.title!r} have: "
                    "low, medium or high?",
                    options=["low", "medium", "high"],
                )
            )
        async with await db.connect() as conn:
            key = ctx.idempotency_key or None
            query = select(tickets.c.id).where(tickets.c.idempotency_key == key)
            ticket_id = (await conn.execute(query)).scalar() if key else None
            if ticket_id is None:
                insert = tickets.insert().values(
                    title=input.title, priority=priority, idempotency_key=key
                )
                result = await conn.execute(insert)
                await conn.commit()
                ticket_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
        return {"ticket": ticket_id, "title": input.title, "priority": priority}

    return [
        create_tool(
            id="open-ticket",
            title="Open a ticket",
            description="Open a support ticket (asks for the priority when it is not given)",
            input_schema=TicketInput,
            suspend_schema=PriorityQuestion,
            resume_schema=PriorityAnswer,
            execute=open_ticket,
            idempotent=True,
        )
    ]
