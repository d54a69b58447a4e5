"""A pending approval past its ``expires_at``, expired and shown: the runtime's ``Expire`` (the
model is told the action did not run), an ``expired`` audit event, the card flipped to
"⌛ Expired" without buttons and its reminder updated (``show_decided``).

Two callers: the expiry sweep, for every call due, and a click (or modal) that comes after
``expires_at``: the runtime refuses it (``ApprovalExpired``) and the card flips at once, so it
never keeps live buttons once nobody can approve it. Several instances may both try: the expiry
is the same atomic claim as a click, so only one of them expires the call and shows it.
"""

from __future__ import annotations

import logging
from datetime import datetime

import bot.slack.deciding._audit as _audit
from agents import Expire, PendingToolCall
from agents.errors import AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended
from bot.slack._services import Services
from bot.slack.delivery._card_index import PostedCard
from bot.slack.delivery._shown import show_decided

logger = logging.getLogger(__name__)


async def expire_call(
    services: Services,
    *,
    run_id: str,
    tool_call_id: str,
    thread_id: str | None,
    now: datetime,
    call: PendingToolCall | None = None,
    since: datetime | None = None,
    card: PostedCard | None = None,
    lock_held: bool = False,
) -> bool:
    """Expire the call and show it; False when it was decided meanwhile (nothing done).

    ``call``: the pending call as the caller read it (else read here, for the audit's window);
    ``since``: when it started waiting, when the call does not say; ``lock_held``: the caller
    holds the thread's lock (a click does)."""
    if call is None:
        call = await services.agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
        if call is None:
            return False  # decided meanwhile, here or by another instance
    try:
        stream = await services.agent.decide(
            Expire(),
            run_id=run_id,
            tool_call_id=tool_call_id,
            decided_by=_audit.SYSTEM,
            source="expiry",
        )
    except (AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended):
        return False  # decided meanwhile, here or by another instance
    card = card or await services.cards.find(run_id, tool_call_id)
    since = call.suspended_at or since
    expires_at = call.expires_at
    await _audit.record(
        services.storage,
        _audit.EXPIRED,
        run_id=run_id,
        tool_call_id=tool_call_id,
        actor=_audit.SYSTEM,
        source="expiry",
        thread_id=thread_id,
        agent_id=(await services.agent.agent_of(run_id)).id,
        data={
            "pending_since": since.isoformat() if since else None,
            "expires_at": expires_at.isoformat() if expires_at else None,
            "ttl_seconds": (expires_at - since).total_seconds() if expires_at and since else None,
            "channel": card.channel if card else None,
            "message_ts": card.ts if card else None,
        },
    )
    logger.info("expired tool call %s of run %s", tool_call_id, run_id)
    if card is None:
        await stream.result()  # not shown in Slack: let the run finish
        return True
    await show_decided(
        services,
        Expire(),
        run_id=run_id,
        tool_call_id=tool_call_id,
        by=None,
        at=expires_at or now,
        stream=stream,
        card=card,
        lock_held=lock_held,
    )
    return True
