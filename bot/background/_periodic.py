"""Expiry tidying and crash recovery, the server's periodic work.

A decision after a call's stored ``expires_at`` is refused by the runtime itself
(``ApprovalExpired``), whether or not a sweep ran. The sweep only tidies: a call past its
``expires_at`` is expired (``Expire``: the model is told the action did not run), its card
shows "Expired" and an ``expired`` audit event is written; at 80% of the call's own window
(``suspended_at`` → ``expires_at``) a reminder is posted in the thread, once.

``sweep_expired(services, now=...)`` is one pass (tests call it with an injected clock);
``Background`` runs it periodically through the runner, and ``recover_interrupted_runs`` every
half ``CLAIM_LEASE_SECONDS`` on every instance. Several instances may sweep at once: the expiry
is the same atomic claim as a click, so only one of them expires a call, and the reminder mark
is ``add_if_absent``; each lapsed claim is taken over by one instance.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

import bot.slack.deciding._audit as _audit
from agents import Expire, PendingToolCall, RunnerClosed, SuspendedRun
from agents.errors import AlreadyDecided, SnapshotNotFound, ToolCallNotSuspended
from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.blocks._blocks import slack_date
from bot.slack.blocks._reminders import reminder_key, reminder_text
from bot.slack.delivery._outbox import flush_outbox
from bot.slack.delivery._publish import post_recovered
from bot.slack.delivery._shown import show_decided
from storage import utcnow

logger = logging.getLogger(__name__)

REMINDER_AT = 0.8
"""Fraction of a call's window (``suspended_at`` → ``expires_at``) after which it is reminded."""
_PAGE = 100


def sweep_interval(ttl_seconds: float) -> float:
    """Seconds between two sweeps: a tenth of the TTL, between 1 s and 60 s."""
    return max(1.0, min(60.0, ttl_seconds / 10))


async def sweep_expired(services: Services, *, now: datetime | None = None) -> int:
    """Expire what is due and remind what is close; returns how many calls this pass expired."""
    now = now or utcnow()
    expired = 0
    for run, call in await _pending_approvals(services):
        if call.expires_at is None:
            continue  # stored without a TTL: never expires
        since = call.suspended_at or run.suspended_at
        if now >= call.expires_at:
            expired += await _expire(services, run, call, since, now)
        elif now >= since + (call.expires_at - since) * REMINDER_AT:
            await _remind(services, run, call, call.expires_at)
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
            "expires_at": call.expires_at.isoformat() if call.expires_at else None,
            "ttl_seconds": (call.expires_at - since).total_seconds() if call.expires_at else None,
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
    ttl = max(60.0, (expires_at - utcnow()).total_seconds() * 2.0)
    if not await services.storage.add_if_absent(key, "1", ttl):
        return
    posted = await services.client.chat_postMessage(
        channel=card.channel,
        thread_ts=card.thread_ts,
        text=reminder_text(card.view, slack_date(expires_at)),
    )
    if posted.get("ts"):
        mark = reminder_key(run.run_id, call.tool_call_id)
        await services.storage.add_if_absent(mark, str(posted["ts"]), ttl)


class Background:
    """The server's periodic work, on every instance: crash recovery every half
    ``CLAIM_LEASE_SECONDS`` (a claim whose owner died is taken over within about one lease) and
    an expiry sweep every ``sweep_interval`` seconds. Each piece of work is a runner job
    (tracked, drained on shutdown); only the timers live outside the runner, so
    ``runner.drain()`` still returns. A slow pass is never doubled up.
    """

    def __init__(
        self,
        services: Services,
        *,
        interval: float | None = None,
        recovery_interval: float | None = None,
    ) -> None:
        self._services = services
        self._interval = interval or sweep_interval(services.settings.approval_ttl_seconds)
        self._recovery_interval = recovery_interval or services.settings.claim_lease_seconds / 2
        self._timers: list[asyncio.Task[None]] = []
        self._busy: set[str] = set()

    def start(self) -> Background:
        """Submit a first recovery; start the timers (the first sweep follows at once)."""
        self._submit("recover-interrupted-runs", self._recover)
        loop = asyncio.get_running_loop()
        self._timers = [
            loop.create_task(
                self._every(self._recovery_interval, "recover-interrupted-runs", self._recover),
                name="recovery-timer",
            ),
            loop.create_task(
                self._every(self._interval, "expiry-sweep", self._sweep, first=True),
                name="expiry-timer",
            ),
        ]
        return self

    async def stop(self) -> None:
        """Stop the timers (work already submitted finishes in the runner)."""
        for timer in self._timers:
            timer.cancel()
        await asyncio.gather(*self._timers, return_exceptions=True)
        self._timers = []

    async def _every(
        self,
        interval: float,
        name: str,
        work: Callable[[], Awaitable[None]],
        *,
        first: bool = False,
    ) -> None:
        if not first:
            await asyncio.sleep(interval)
        while True:
            if not self._submit(name, work):
                return
            await asyncio.sleep(interval)

    def _submit(self, name: str, work: Callable[[], Awaitable[None]]) -> bool:
        """Submit ``work`` unless its last pass is still running; False once the runner closed."""
        if name in self._busy:
            return True
        self._busy.add(name)
        try:
            self._services.runner.submit(self._once(name, work), name=name)
        except RunnerClosed:
            self._busy.discard(name)
            return False
        return True

    async def _once(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except Exception as exc:  # logged; the next tick tries again
            service = unavailable(exc)
            if service is None:
                logger.exception("%s failed", name)
            else:  # an outage: one line for all of it (Outages), not a traceback per tick
                self._services.outages.down(service, exc)
        finally:
            self._busy.discard(name)

    async def _recover(self) -> None:
        await flush_outbox(self._services)  # Slack writes kept while Slack was unreachable
        for stream in await self._services.agent.recover_interrupted_runs():
            self._services.runner.submit(
                post_recovered(self._services, stream), name=f"recovered-{stream.run_id}"
            )

    async def _sweep(self) -> None:
        expired = await sweep_expired(self._services)
        if expired:
            logger.info("expired %d pending approvals", expired)
