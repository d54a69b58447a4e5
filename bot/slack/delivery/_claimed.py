"""What the runtime's claim of a decided call recorded, for the card that shows it: the
approvers of a quorum call, in order, and the data a question was answered with (the claim is
written with the decision, so every surface that decided, here or elsewhere, left it)."""

from __future__ import annotations

from typing import Any

from storage import Storage


async def taken_over(storage: Storage, run_id: str, tool_call_id: str) -> bool:
    """Whether another instance took the call's claim over (its lease epoch was raised): the
    new owner shows the call's one outcome, so a late "approved" from the first must not
    overwrite it."""
    return await takeover_status(storage, run_id, tool_call_id) is not None


async def takeover_status(storage: Storage, run_id: str, tool_call_id: str) -> str | None:
    """For a claim another instance took over: the status of its outcome (``interrupted``,
    ``ok`` …, or ``""`` while it is not written yet); None when nobody took it over."""
    for c in await storage.list_claims(run_id):
        if c.tool_call_id == tool_call_id and c.epoch > 0:
            outcome = c.outcome if isinstance(c.outcome, dict) else {}
            return str(outcome.get("status") or "")
    return None


async def claimed_detail(
    storage: Storage, run_id: str, tool_call_id: str, decision: str, key: str
) -> Any:
    """``detail[key]`` of the latest ``decision`` claim (``approved``, ``resumed``) of the call;
    None when there is none."""
    claims = [
        c
        for c in await storage.list_claims(run_id)
        if c.tool_call_id == tool_call_id and c.decision == decision
    ]
    if not claims:
        return None
    return max(claims, key=lambda c: c.decided_at).detail.get(key)
