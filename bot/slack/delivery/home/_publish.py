"""The App Home tab published: at once for a person who opened it (or whom it tells what their
click came to), and again, in the background, for only the viewers a change affects.

Who a change to a pending call affects (``affected_viewers``), among those who opened Home
here: whoever may decide it (the gate's own answer, ``Agent.ask``: its rule's approvers and
user groups, escalation, quorum, expiry, as a click would be judged), its requester, whoever
took the decision (their grants and notes are on their tab), and whoever's last published
view lists it. Nobody else's view changes: it lists only calls they may decide.

Republishes are coalesced and paced (``HomeQueue``): a viewer is queued once however many
changes affect them within ``COALESCE_SECONDS`` and their view is built when it goes out (the
latest state); one background flush publishes the queue at Slack's ``views.publish`` pace
(Tier 4). A 429 pauses every publish for its ``Retry-After`` and queues that viewer again
(the SDK's own 429 retries are off for these calls: they would sleep while others go on);
a viewer rate limited ``RATE_LIMITED_TRIES`` times in a row is given up, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agents import PendingToolCall, RunnerClosed
from bot.slack._services import Services
from bot.slack.delivery._webclient import without_rate_limit_retries
from bot.slack.delivery.home._listing import HomeView, Pending, home_for, may_approve
from bot.slack.delivery.home._pacing import RATE_LIMITED_TRIES

logger = logging.getLogger(__name__)


async def publish_home(services: Services, user: str) -> None:
    """Publish ``user``'s Home tab now (they opened it, or it tells them something): it takes
    a token from the pace if there is one, never waits for one; failures are logged, and a 429
    queues it for after the ``Retry-After``."""
    built = await home_for(services, user)
    if built is None:
        return
    services.homes.bucket.spend()
    await _send(services, user, built)


async def affected_viewers(
    services: Services, run_id: str, tool_call_ids: Iterable[str], *, by: str | None
) -> set[str]:
    """The Home viewers a decision by ``by`` on these calls of ``run_id`` may change (see the
    module docstring); asked before the decision, while the calls are pending.

    With "anyone may approve" (no approvers in the call's rule, or no decision policy), everyone
    may decide it, so every viewer is affected: each of their views lists the call. That is
    unavoidable, and the pace keeps it within Slack's limit. When the calls cannot be read
    (storage down), every viewer is affected too.
    """
    viewers = services.home_viewers.users()
    known = set(viewers)
    affected = {by} & known if by else set()
    for tool_call_id in tool_call_ids:
        affected |= services.home_viewers.showing(run_id, tool_call_id)
        try:
            call = await services.agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
        except Exception as exc:  # cannot tell who may decide it: everyone may be
            logger.warning("republishing every Home tab: the call could not be read (%s)", exc)
            return known
        if call is None:  # decided already: whoever still shows it is counted above
            continue
        if call.requested_by in known:
            affected.add(call.requested_by)
        for user in await services.policy.who_may_approve(call, known - affected):
            if await _may_decide(services, run_id, call, user):
                affected.add(user)
    return affected


def republish(services: Services, users: Iterable[str]) -> None:
    """Publish the Home tabs of ``users`` again, in the background (coalesced, paced)."""
    if services.homes.request(users):
        _start_flush(services)


async def _may_decide(services: Services, run_id: str, call: PendingToolCall, user: str) -> bool:
    try:
        return await may_approve(services, run_id, call, user)
    except Exception:  # the gate could not say: their view may change
        return True


def _start_flush(services: Services) -> None:
    try:
        services.runner.submit(_flush(services), name="home-republish")
    except RunnerClosed:
        services.homes.stopped()
        logger.info("not republishing Home tabs: the bot is stopping")


async def _flush(services: Services) -> None:
    """Publish every queued viewer's Home tab as it comes due, at the pace; ends when nobody
    is queued (the next change starts another flush)."""
    queue = services.homes
    try:
        while await queue.wait_due():
            await queue.bucket.take()
            user = queue.pop_due()
            if user is None:  # pushed later meanwhile (a 429)
                continue
            pending = queue.cached(lambda: Pending(services))
            try:
                built = await home_for(services, user, pending)
            except Exception:
                logger.exception("could not build a Home tab to republish")
                continue
            if built is not None:
                await _send(services, user, built)
    finally:
        queue.stopped()


async def _send(services: Services, user: str, built: HomeView) -> None:
    queue = services.homes
    try:
        await _client(services).views_publish(user_id=user, view=built.view)
    except SlackApiError as exc:
        if exc.response.status_code != 429:
            logger.warning("could not publish the Home tab: %s", exc.response.get("error"))
            return
        retry_after = _retry_after(exc)
        if not queue.rate_limited(user, retry_after):
            logger.warning(
                "gave up publishing a Home tab: rate limited %d times in a row", RATE_LIMITED_TRIES
            )
            return
        logger.info("a Home tab was rate limited: published again in %.0f s", retry_after)
        if queue.start():
            _start_flush(services)
        return
    queue.published(user)
    services.home_viewers.showed(user, built.shown)


def _client(services: Services) -> AsyncWebClient:
    queue = services.homes
    if queue.client is None:
        queue.client = without_rate_limit_retries(services.client)
    return queue.client


def _retry_after(exc: SlackApiError) -> float:
    headers = exc.response.headers or {}
    value = headers.get("Retry-After") or headers.get("retry-after") or "1"
    try:
        return max(0.0, float(value))
    except ValueError:
        return 1.0
