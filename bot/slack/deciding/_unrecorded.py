"""A click or a Submit whose decision cannot be recorded: the same visible answer everywhere.

A decision is recorded in storage (the claim) under the thread's lock (Redis with
``REDIS_URL``). When either is down before the claim, nothing changed, and the person who
clicked is told so, whatever they clicked: a card's button, "Approve all" on a batch card, a
button on the Home tab, a modal's Submit, "Approve and allow…" or its grant modal. The outage
is logged once (``Outages``), never as a traceback per click.

``or_not_recorded`` wraps the work a listener hands to the runner: storage or Redis failing
anywhere in it ends it with that answer. Work that recorded a decision already shows its own
failures in the thread (``reporting_failures``), so an outage after the claim never reaches
this wrapper as "not recorded".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from bot.ops._outage import Service, unavailable
from bot.slack._services import Services
from bot.slack.delivery.home._listing import UNTHREADED
from bot.slack.delivery.home._publish import publish_home

logger = logging.getLogger(__name__)

SERVICE_NAMES: dict[Service, str] = {
    "storage": "the database (STORAGE_URL)",
    "redis": "Redis (REDIS_URL)",
    "slack": "Slack",
    "model": "the model API",
}
"""How ``NOT_RECORDED`` names each service."""


@dataclass(frozen=True, kw_only=True)
class Asker:
    """Who clicked, and where an ephemeral reaches them."""

    user: str
    """The Slack user who clicked or submitted."""
    channel: str | None
    """The channel of the card (None or ``UNTHREADED``: the Home tab, told there)."""
    thread_ts: str | None = None
    """The thread of the card, for the ephemeral."""


def recording_outage(exc: BaseException) -> Service | None:
    """``storage`` or ``redis`` when ``exc`` says that one is down (what a decision needs to be
    recorded); None for anything else."""
    service = unavailable(exc)
    return service if service in ("storage", "redis") else None


def not_recorded_text(service: Service) -> str:
    """The answer to a decision that could not be recorded because ``service`` is down."""
    return msg.NOT_RECORDED.format(service=SERVICE_NAMES[service])


async def tell_not_recorded(
    services: Services, asker: Asker, service: Service, cause: BaseException | str
) -> None:
    """Log the outage (once) and tell ``asker`` nothing was recorded: an ephemeral by the
    card, or a note on their Home tab."""
    services.outages.down(service, cause)
    await tell_asker(services, asker, not_recorded_text(service))


async def tell_asker(services: Services, asker: Asker, text: str) -> None:
    """Tell ``asker`` privately: an ephemeral by the card, or a note on their Home tab (a click
    there on a call in no Slack thread); a failure to deliver it is logged."""
    if asker.channel is None or asker.channel == UNTHREADED:
        services.home_viewers.tell(asker.user, text)
        await publish_home(services, asker.user)
        return
    try:
        await services.client.chat_postEphemeral(
            channel=asker.channel, user=asker.user, text=text, thread_ts=asker.thread_ts
        )
    except SlackApiError as exc:
        logger.warning("could not tell %s: %s", asker.user, exc.response.get("error"))


async def or_not_recorded(services: Services, asker: Asker, work: Awaitable[None]) -> None:
    """Await ``work``; storage or Redis failing in it is told to ``asker`` as "nothing was
    recorded" (anything else propagates)."""
    try:
        await work
    except Exception as exc:
        service = recording_outage(exc)
        if service is None:
            raise
        await tell_not_recorded(services, asker, service, exc)
