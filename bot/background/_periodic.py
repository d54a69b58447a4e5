"""Expiry, reminders and crash recovery, the server's periodic work.

A decision after a call's stored ``expires_at`` is refused by the runtime itself
(``ApprovalExpired``), whether or not a sweep ran, and a click that comes too late flips its
card at once (``expire_call``). The sweep makes the outcome reach every card on time (SPEC 12:
within 10 s of the event, whatever set the TTL: the environment or a policy rule): a call past
its ``expires_at`` is expired (``Expire``: the model is told the action did not run), its card
shows "⌛ Expired" and an ``expired`` audit event is written; at 80% of the call's own window
(``suspended_at`` → ``expires_at``) a reminder is posted in the thread, once, and it is updated
when the card is decided (after an Extend, once more for the new expiry, as long before it:
``agents.remind_at``); at each of its rule's ``escalate`` steps the call is escalated, once
across instances (``bot.background._escalation``).

``sweep(services, now=...)`` is one pass (tests call it with an injected clock). It reads only
the runs due by then from storage's due index (``Storage.list_due``: by key, never an offset or
a count; a run not due is never read), handles each and moves it to its next moment
(``agents.next_due``: a call's first look, escalation steps, reminder, expiry); it says when the
next one is due. ``Background`` runs it on the runner at most
``SWEEP_EVERY`` seconds apart, sooner when something is due sooner (``sweep_delay``), and
``recover_interrupted_runs`` every half ``CLAIM_LEASE_SECONDS`` on every instance, and sets the
waiting status lines of assistant threads again before Slack clears them (``refresh_statuses``).
Several instances may sweep at once: the expiry is the same atomic claim as a click, so only one of
them expires a call, and the reminder mark is ``add_if_absent``; each lapsed claim is taken
over by one instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from agents import PendingToolCall, RunnerClosed, SuspendedRun, next_due, remind_at
from bot.background._escalation import escalate_due
from bot.ops._outage import unavailable
from bot.slack._services import Services
from bot.slack.blocks._blocks import slack_date
from bot.slack.blocks._reminders import reminder_key, reminder_text
from bot.slack.deciding._expiry import expire_call
from bot.slack.delivery._card_posts import make_kept_card, recover_lost_card
from bot.slack.delivery._outbox import flush_outbox
from bot.slack.delivery._publish import post_recovered
from bot.slack.surfaces._status import refresh_statuses
from bot.slack.surfaces._status_keeper import TICK_SECONDS
from storage import utcnow

logger = logging.getLogger(__name__)

SWEEP_EVERY = 5.0
"""Longest pause between two sweeps, whatever the TTLs (SPEC 12: at least every 5 s)."""
SWEEP_SOONEST = 0.25
"""Shortest pause: something due a moment away is swept then, not polled in a loop."""
_PAGE = 100


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """What one pass did, and when the next one has something to do."""

    expired: int
    """Calls this pass expired."""
    next_due: datetime | None
    """The earliest reminder, escalation step or expiry still ahead among the calls left
    pending (None: none)."""
    escalated: int = 0
    """Escalation steps this instance took in this pass (``bot.background._escalation``)."""


def sweep_delay(next_due: datetime | None, now: datetime, longest: float = SWEEP_EVERY) -> float:
    """Seconds until the next sweep: ``longest``, or less when ``next_due`` comes sooner."""
    if next_due is None:
        return longest
    return min(longest, max(SWEEP_SOONEST, (next_due - now).total_seconds()))


async def sweep(services: Services, *, now: datetime | None = None) -> Sweep:
    """Expire what is due, remind what is close, escalate what waited, and give a call that
    pends without any card its card (one pass). Reads only the runs due by ``now`` (storage's
    due index, a page at a time by key) and moves each to its next moment once handled."""
    now = now or utcnow()
    expired = escalated = 0
    async for run in services.agent.every_due_run(now, per_page=_PAGE):
        done = await _handle(services, run, now)
        expired, escalated = expired + done.expired, escalated + done.escalated
        # the run's next moment (None: nothing left); a run saved since keeps its own
        await services.agent.reschedule_run(
            run, next_due(run.tool_calls, after=now, since=run.suspended_at)
        )
    upcoming = await services.agent.next_due_after(now)
    return Sweep(expired=expired, next_due=upcoming, escalated=escalated)


async def sweep_expired(services: Services, *, now: datetime | None = None) -> int:
    """One pass of ``sweep``; returns how many calls it expired."""
    return (await sweep(services, now=now)).expired


async def _handle(services: Services, run: SuspendedRun, now: datetime) -> Sweep:
    """Whatever is due at ``now`` for the pending approvals of one run."""
    expired = escalated = 0
    for call in run.tool_calls:
        if not call.requires_approval:
            continue
        since = call.suspended_at or run.suspended_at
        await recover_lost_card(
            services, run_id=run.run_id, thread_id=run.thread_id, call=call, since=since, now=now
        )
        if call.expires_at is not None and now >= call.expires_at:
            expired += await expire_call(
                services,
                run_id=run.run_id,
                tool_call_id=call.tool_call_id,
                thread_id=run.thread_id,
                now=now,
                call=call,
                since=since,
            )
            continue
        taken, _ = await escalate_due(services, run, call, since=since, now=now)
        escalated += taken
        ttl = call.requirement.ttl_seconds
        if call.expires_at is not None and now >= remind_at(since, call.expires_at, ttl):
            await _remind(services, run, call, call.expires_at)
    return Sweep(expired=expired, next_due=None, escalated=escalated)


async def _remind(
    services: Services, run: SuspendedRun, call: PendingToolCall, expires_at: datetime
) -> None:
    """The reminder of ``call`` for its ``expires_at``, once across instances: one for each
    expiry it has (an Extend gives it a new one); the latest one's ``ts`` is kept for its
    card's decision to update."""
    card = await services.cards.find(run.run_id, call.tool_call_id)
    if card is None:
        return
    key = f"slack:reminded:{run.run_id}:{call.tool_call_id}:{expires_at.timestamp():.6f}"
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
        await services.storage.delete_value(mark)  # a reminder of an earlier expiry
        await services.storage.add_if_absent(mark, str(posted["ts"]), ttl)


class Background:
    """The server's periodic work, on every instance: crash recovery every half
    ``CLAIM_LEASE_SECONDS`` (a claim whose owner died is taken over within about one lease) and
    the expiry sweep, at most ``sweep_every`` seconds apart and sooner when a reminder or an
    expiry is due sooner. Each piece of work is a runner job (tracked, drained on shutdown);
    only the timers live outside the runner, so ``runner.drain()`` still returns. A slow pass
    is never doubled up.
    """

    def __init__(
        self,
        services: Services,
        *,
        interval: float | None = None,
        recovery_interval: float | None = None,
    ) -> None:
        self._services = services
        self._sweep_every = min(interval or SWEEP_EVERY, SWEEP_EVERY)
        self._delay = self._sweep_every
        self._recovery_interval = recovery_interval or services.settings.claim_lease_seconds / 2
        self._timers: list[asyncio.Task[None]] = []
        self._busy: set[str] = set()

    @property
    def sweep_every(self) -> float:
        """The longest pause between two sweeps (at most ``SWEEP_EVERY``, whatever the TTL)."""
        return self._sweep_every

    def start(self) -> Background:
        """Submit a first recovery; start the timers (the first sweep follows at once)."""
        self._submit("recover-interrupted-runs", self._recover)
        loop = asyncio.get_running_loop()
        self._timers = [
            loop.create_task(
                self._every(self._recovery_interval, "recover-interrupted-runs", self._recover),
                name="recovery-timer",
            ),
            loop.create_task(self._sweeping(), name="expiry-timer"),
            loop.create_task(  # waiting status lines, set again before Slack clears them
                self._every(TICK_SECONDS, "status-refresh", self._refresh_statuses),
                name="status-timer",
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

    async def _sweeping(self) -> None:
        """Sweep, wait for the pass (at most ``sweep_every``), then pause as it said."""
        while True:
            swept = asyncio.Event()
            if not self._submit("expiry-sweep", functools.partial(self._sweep, swept)):
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(swept.wait(), self._sweep_every)
            await asyncio.sleep(self._delay)

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
        # Slack writes (answers, card updates, cards) kept while Slack was unreachable
        await flush_outbox(self._services, make_kept_card)
        for stream in await self._services.agent.recover_interrupted_runs():
            self._services.runner.submit(
                post_recovered(self._services, stream), name=f"recovered-{stream.run_id}"
            )

    async def _refresh_statuses(self) -> None:
        await refresh_statuses(self._services)

    async def _sweep(self, swept: asyncio.Event) -> None:
        try:
            done = await sweep(self._services)
            self._delay = sweep_delay(done.next_due, utcnow(), self._sweep_every)
        finally:
            swept.set()
        if done.expired:
            logger.info("expired %d pending approvals", done.expired)
