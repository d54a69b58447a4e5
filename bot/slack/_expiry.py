"""Expiry: pending approvals older than ``APPROVAL_TTL_SECONDS`` are declined with reason
"expired" (the model is told the action did not run), their card shows "Expired" and an
``expired`` audit event is written; at 80% of the TTL a reminder is posted in the thread, once.

``sweep_expired(services, now=...)`` is one pass (tests call it with an injected clock);
``Background`` runs it periodically through the runner, with ``recover_interrupted_runs`` at
start-up. Several instances may sweep at once: the decline is the same atomic claim as a click,
so only one of them expires a call, and the reminder mark is ``add_if_absent``.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

import bot.slack._audit as _audit
import bot.slack._messages as msg
from agents import Expire, PendingToolCall, RunnerClosed, SuspendedRun
from agents.errors import AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended
from bot.slack._blocks import slack_date
from bot.slack._mrkdwn import escape_truncated
from bot.slack._publish import post_recovered
from bot.slack._services import Services
from bot.slack._shown import show_decided
from storage import utcnow

logger = logging.getLogger(__name__)

REMINDER_AT = 0.8
"""Fraction of the TTL after which the reminder is posted."""
_PAGE = 100


def sweep_interval(ttl_seconds: float) -> float:
    """Seconds between two sweeps: a tenth of the TTL, between 1 s and 60 s."""
    return max(1.0, min(60.0, ttl_seconds / 10))


async def sweep_expired(services: Services, *, now: datetime | None = None) -> int:
    """Expire what is due and remind what is close; returns how many calls this pass expired."""
    now = now or utcnow()
    ttl = timedelta(seconds=services.settings.approval_ttl_seconds)
    expired = 0
    for run, call in await _pending_approvals(services):
        since = call.suspended_at or run.suspended_at
        if now - since >= ttl:
            expired += await _expire(services, run, call, since, now)
        elif now - since >= ttl * REMINDER_AT:
            await _remind(services, run, call, since + ttl)
    return expired


async def _pending_approvals(services: Services) -> list[tuple[SuspendedRun, PendingToolCall]]:
    found: list[tuple[SuspendedRun, PendingToolCall]] = []
    page = 0
    while True:
        batch = await services.agent.list_suspended_runs(page=page, per_page=_PAGE)
        for run in batch.runs:
            found.extend((run, c) for c in run.tool_calls if c.requires_approval)
        page += 1
        if not batch.runs or page * _PAGE >= batch.total:
            return found


async def _expire(
    services: Services, run: SuspendedRun, call: PendingToolCall, since: datetime, now: datetime
) -> int:
    try:
        stream = await services.agent.decide(
            Expire(),
            run_id=run.run_id,
            tool_call_id=call.tool_call_id,
            decided_by=_audit.SYSTEM,
            source="expiry",
        )
    except (AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended):
        return 0  # decided meanwhile, here or by another instance
    card = await services.cards.find(run.run_id, call.tool_call_id)
    await _audit.record(
        services.storage,
        _audit.EXPIRED,
        run_id=run.run_id,
        tool_call_id=call.tool_call_id,
        actor=_audit.SYSTEM,
        source="expiry",
        thread_id=run.thread_id,
        agent_id=services.agent.id,
        data={
            "pending_since": since.isoformat(),
            "ttl_seconds": services.settings.approval_ttl_seconds,
            "channel": card.channel if card else None,
            "message_ts": card.ts if card else None,
        },
    )
    logger.info("expired tool call %s of run %s", call.tool_call_id, run.run_id)
    if card is None:
        await stream.result()  # not shown in Slack: let the run finish
        return 1
    await show_decided(
        services,
        Expire(),
        run_id=run.run_id,
        tool_call_id=call.tool_call_id,
        by=None,
        at=now,
        stream=stream,
        card=card,
    )
    return 1


async def _remind(
    services: Services, run: SuspendedRun, call: PendingToolCall, expires_at: datetime
) -> None:
    card = await services.cards.find(run.run_id, call.tool_call_id)
    if card is None:
        return
    key = f"slack:reminded:{run.run_id}:{call.tool_call_id}"
    ttl = max(60.0, services.settings.approval_ttl_seconds * 2.0)
    if not await services.storage.add_if_absent(key, "1", ttl):
        return
    tool = escape_truncated(call.tool_name, 80).replace("`", "'")
    await services.client.chat_postMessage(
        channel=card.channel,
        thread_ts=card.thread_ts,
        text=msg.REMINDER.format(tool=tool, when=slack_date(expires_at)),
    )


class Background:
    """The server's periodic work: crash recovery once at start-up, then an expiry sweep every
    ``sweep_interval`` seconds. Each piece of work is a runner job (tracked, drained on
    shutdown); only the timer lives outside the runner, so ``runner.drain()`` still returns.
    """

    def __init__(self, services: Services, *, interval: float | None = None) -> None:
        self._services = services
        self._interval = interval or sweep_interval(services.settings.approval_ttl_seconds)
        self._timer: asyncio.Task[None] | None = None
        self._sweeping = False

    def start(self) -> Background:
        """Submit recovery and a first sweep; start the timer."""
        self._services.runner.submit(self._recover(), name="recover-interrupted-runs")
        self._timer = asyncio.get_running_loop().create_task(self._tick(), name="expiry-timer")
        return self

    async def stop(self) -> None:
        """Stop the timer (a sweep already submitted finishes in the runner)."""
        if self._timer is not None:
            self._timer.cancel()
            await asyncio.gather(self._timer, return_exceptions=True)
            self._timer = None

    async def _recover(self) -> None:
        for stream in await self._services.agent.recover_interrupted_runs():
            await post_recovered(self._services, stream)

    async def _tick(self) -> None:
        while True:
            if not self._sweeping:  # a slow pass is never doubled up
                self._sweeping = True
                try:
                    self._services.runner.submit(self._sweep(), name="expiry-sweep")
                except RunnerClosed:
                    return
            await asyncio.sleep(self._interval)

    async def _sweep(self) -> None:
        try:
            expired = await sweep_expired(self._services)
            if expired:
                logger.info("expired %d pending approvals", expired)
        finally:
            self._sweeping = False
