"""What the runtime's claim of a decided call recorded, for the card that shows it: the
outcome (who decided what, when; interrupted or run again after a takeover), the approvers of a
quorum call, in order, and the data a question was answered with (the claim is written with the
decision, so every surface that decided, here or elsewhere, left it). Whoever shows an outcome
(the clicked instance, a takeover, recovery, the API's hook) draws the card from here.
"""

from __future__ import annotations

from typing import Any

from agents import Approve, Decision, Decline, Expire
from bot.slack.blocks._card import Decided
from storage import ClaimRecord, Storage

SHOWN_CLAIMS = frozenset({"approved", "declined", "expired"})
"""Claims a card shows as its outcome (a question's ``resumed`` is shown as its answer)."""


async def stored_outcome(storage: Storage, run_id: str, tool_call_id: str) -> Decided | None:
    """The call's outcome as its latest claim recorded it; None while it is not decided."""
    claims = [
        c
        for c in await storage.list_claims(run_id)
        if c.tool_call_id == tool_call_id and c.decision in SHOWN_CLAIMS
    ]
    return decided_of(max(claims, key=lambda c: c.decided_at)) if claims else None


def decided_of(claim: ClaimRecord) -> Decided:
    """How a card (or a batch row) shows the outcome its claim recorded."""
    detail = claim.detail
    outcome = claim.outcome if isinstance(claim.outcome, dict) else {}
    status = outcome.get("status")
    decision: Decision | None
    if claim.decision == "approved":
        edited = detail.get("args") if detail.get("edited") else None
        decision = Approve(args=edited if isinstance(edited, dict) else None)
    elif claim.decision == "declined":
        reason = detail.get("reason")
        decision = Decline(
            reason=reason if isinstance(reason, str) else None,
            withdrawn=bool(detail.get("withdrawn")),
        )
    elif claim.decision == "expired":
        decision = Expire()
    else:
        decision = None
    approvers = detail.get("approved_by")
    return Decided(
        decision=decision,
        by=claim.decided_by,
        at=claim.decided_at,
        approvers=tuple(str(a) for a in approvers) if isinstance(approvers, list) else (),
        interrupted=claim.decision == "approved" and status == "interrupted",
        ran_again=claim.decision == "approved" and claim.epoch > 0 and status != "interrupted",
    )


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
