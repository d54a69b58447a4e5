"""Example tool on the demo orders: issue a refund (approval when the amount is over 100)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select

from tools._context import ApprovalContext, ToolContext
from tools._demo_db import DemoDB, orders, refunds
from tools._tool import Tool, create_tool

APPROVAL_THRESHOLD = 100.0
"""Refunds above this amount wait for a person."""


class RefundInput(BaseModel):
    """Arguments of ``refund``."""

    order: int = Field(description="The order id")
    amount: float = Field(gt=0, description="How much to refund")
    reason: str | None = Field(default=None, description="Why, when the customer said")


def needs_approval(ctx: ApprovalContext) -> bool:
    """A refund over ``APPROVAL_THRESHOLD`` needs approval (unreadable amounts do too)."""
    return float(ctx.args.get("amount", 0)) > APPROVAL_THRESHOLD


def refund_tools(db: DemoDB) -> list[Tool]:
    """``refund``: approval over 100 (by predicate); safe to retry (idempotency key)."""

    async def refund(input: RefundInput, ctx: ToolContext) -> dict[str, Any]:
        async with await db.connect() as conn:
            done = (
                await conn.execute(
                    select(refunds).where(refunds.c.idempotency_key == ctx.idempotency_key)
                )
            ).first()
            if done is not None and ctx.idempotency_key:
                return _refunded(dict(done._mapping))
            order = (await conn.execute(select(orders).where(orders.c.id == input.order))).first()
            if order is None:
                return {"refunded": False, "order": input.order, "reason": "no such order"}
            already = (
                await conn.execute(
                    select(func.coalesce(func.sum(refunds.c.amount), 0.0)).where(
                        refunds.c.order_id == input.order
                    )
                )
            ).scalar_one()
            left = float(order._mapping["total"]) - float(already)
            if input.amount > left:
                return {
                    "refunded": False,
                    "order": input.order,
                    "reason": f"only {left:.2f} of the order total is left to refund",
                }
            result = await conn.execute(
                refunds.insert().values(
                    order_id=input.order,
                    amount=input.amount,
                    reason=input.reason,
                    idempotency_key=ctx.idempotency_key or None,
                )
            )
            await conn.commit()
        refund_id = result.inserted_primary_key[0] if result.inserted_primary_key else None
        return _refunded({"id": refund_id, "order_id": input.order, "amount": input.amount})

    return [
        create_tool(
            id="refund",
            title="Issue a refund",
            description=(
                f"Refund an order (amounts over {APPROVAL_THRESHOLD:.0f} need a person's approval)"
            ),
            input_schema=RefundInput,
            execute=refund,
            require_approval=needs_approval,
            idempotent=True,
        )
    ]


def _refunded(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "refunded": True,
        "refund_id": row.get("id"),
        "order": row.get("order_id"),
        "amount": row.get("amount"),
    }
