"""Draining on SIGTERM: new Slack deliveries are refused while running work finishes.

Once ``Drain.start()`` is called, ``POST /slack/events`` answers 503 with ``Retry-After``: Slack
retries an event it could not deliver, and the load balancer sends it to another instance (one
whose ``/readyz`` still answers 200). Work already taken (a tool running after a click) goes on
until the runner's grace period ends; whatever is still running then is cancelled, and its claim's
lease lapses so another instance's recovery takes it over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from agents import Runner
from bot._errors import BotError

logger = logging.getLogger(__name__)

DRAIN_GRACE_SECONDS = 30.0
"""How long running work may go on after SIGTERM before it is cancelled (its leases lapse)."""
REFUSED_WHILE_DRAINING = frozenset({"/slack/events"})
"""Paths that take new work; refused while draining (``/healthz``, ``/metrics`` stay up)."""


class Drain:
    """Whether this instance has stopped taking new work."""

    def __init__(self) -> None:
        self.draining = False

    def start(self) -> None:
        """Refuse new deliveries from now on."""
        if not self.draining:
            logger.info("draining: new Slack deliveries are refused, running work finishes")
        self.draining = True

    async def drain(self, runner: Runner, grace_seconds: float = DRAIN_GRACE_SECONDS) -> None:
        """Refuse new deliveries, let ``runner``'s work finish (including the runs that requests
        accepted just before keep starting) for up to ``grace_seconds``, then close it and cancel
        what is left. The server keeps answering meanwhile (503 to Slack, so it retries
        elsewhere; ``/healthz`` and ``/metrics`` as usual).
        """
        self.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_seconds):
                await runner.drain()
        await runner.close(grace_seconds=0)

    async def ready(self) -> bool:
        """The readiness probe a load balancer uses: fails while draining."""
        if self.draining:
            raise BotError(
                "this instance is stopping (SIGTERM): send new traffic to another instance"
            )
        return True


DRAIN = web.AppKey("countersign.drain", Drain)
"""The web app's ``Drain`` (set by ``install_drain``)."""


def install_drain(web_app: web.Application) -> Drain:
    """Refuse ``REFUSED_WHILE_DRAINING`` with 503 once the returned ``Drain`` is started
    (install it after ``install_metrics``, so that refused deliveries are counted too)."""
    drain = Drain()
    web_app[DRAIN] = drain

    @web.middleware
    async def refuse(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if drain.draining and request.path in REFUSED_WHILE_DRAINING:
            return web.json_response(
                {"error": "draining"}, status=503, headers={"Retry-After": "1"}
            )
        return await handler(request)

    web_app.middlewares.append(refuse)
    return drain
