"""A newcomer's own agent for ``MODEL=offline`` tests: its model is OpenAI's and no key is set
anywhere, so only the offline model can serve it. Reload the module for a fresh ``Agent`` (a
served agent's runner closes when its bot stops)."""

from __future__ import annotations

from pydantic import BaseModel

from agents import Agent
from tools import ToolContext, create_tool


class _Ticket(BaseModel):
    id: str
    reason: str = ""


class _Order(BaseModel):
    order: int
    amount: float


archived: list[dict[str, str]] = []
"""Every ``archive-ticket`` that really ran (the thing approval guards)."""


async def _archive(input: _Ticket, ctx: ToolContext) -> dict[str, str]:
    archived.append(input.model_dump())
    return {"archived": input.id}


async def _quote(input: _Order, ctx: ToolContext) -> dict[str, float]:
    return {"order": input.order, "refund": input.amount}


agent = Agent(
    id="yours",
    model="openai/gpt-5-mini",  # no key anywhere: MODEL=offline serves it on the offline model
    tools=[
        create_tool(
            id="archive-ticket",
            description="Archive a ticket",
            input_schema=_Ticket,
            execute=_archive,
            require_approval=True,
        ),
        create_tool(
            id="quote-refund",
            description="What a refund would be",
            input_schema=_Order,
            execute=_quote,
        ),
    ],
)
"""A newcomer's own agent and tools, on OpenAI: tried with ``MODEL=offline`` and ``/call``."""
