"""Outages of what the bot depends on: which service a failure means, logged once per outage.

``unavailable(exc)`` names the service an exception says is unreachable (``storage``, ``redis``,
``slack``, ``model``) or None for any other failure (a bug: logged with its traceback).
``Outages`` logs one WARNING line when a service goes down (what to check) and one INFO line when
it answers again, however many requests fail in between.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

import aiohttp
from redis.exceptions import RedisError
from slack_sdk.errors import SlackApiError
from sqlalchemy.exc import DBAPIError

from agents.errors import ModelError
from storage import StorageConfigError, StorageUnavailable, patiently

logger = logging.getLogger(__name__)

T = TypeVar("T")

Service = Literal["storage", "redis", "slack", "model"]

WHAT_TO_CHECK: dict[Service, str] = {
    "storage": "check STORAGE_URL and that its database server is running",
    "redis": "check REDIS_URL (host, port, password) and that the Redis server is running",
    "slack": "check SLACK_API_URL / the network path to Slack and SLACK_BOT_TOKEN",
    "model": "check OPENAI_BASE_URL, OPENAI_API_KEY and that the model server is running",
}


def unavailable(exc: BaseException) -> Service | None:
    """The service ``exc`` says is unreachable, or None when it is some other failure."""
    if isinstance(exc, StorageUnavailable):
        return "storage"
    if isinstance(exc, StorageConfigError) and isinstance(exc.__cause__, OSError | DBAPIError):
        return "storage"  # a SQL database that could not be opened (at its first use)
    if isinstance(exc, RedisError):
        return "redis"
    if isinstance(exc, ModelError):  # unreachable, timed out or failing server-side
        cause = exc.__cause__
        openai = sys.modules.get("openai")  # never imported: no OpenAI client failed
        if openai is not None and isinstance(cause, openai.APIConnectionError):  # and timeouts
            return "model"
        return "model" if exc.status is not None and exc.status >= 500 else None
    if isinstance(exc, SlackApiError):
        status = getattr(exc.response, "status_code", 200)
        return "slack" if status >= 500 or status == 429 else None
    if isinstance(exc, aiohttp.ClientError | asyncio.TimeoutError | ConnectionError):
        return "slack"  # the Web API client is the only aiohttp client the edge uses
    return None


class Outages:
    """Which services are down now; a line when one goes down and when it comes back."""

    def __init__(self) -> None:
        self._down: dict[Service, str] = {}
        self._noticed = 0
        self._told: dict[Service, set[str]] = {}

    @property
    def noticed(self) -> int:
        """How many outages were noticed so far: a reading taken before a new one is stale."""
        return self._noticed

    def down(self, service: Service, detail: BaseException | str) -> None:
        """Record a failure of ``service``; logged only when it was up until now."""
        if service in self._down:
            return
        what = detail if isinstance(detail, str) else describe(detail)
        self._down[service] = what
        self._noticed += 1
        logger.warning("%s is unavailable (%s): %s", service, what, WHAT_TO_CHECK[service])

    def up(self, service: Service) -> None:
        """Record that ``service`` answered; logged only when it was down."""
        self._told.pop(service, None)
        if self._down.pop(service, None) is not None:
            logger.info("%s answers again", service)

    def first_notice(self, service: Service, where: str) -> bool:
        """True the first time ``where`` (a thread) is to be told ``service`` is down, during
        this outage: a person is told once, not at every retry of Slack's."""
        told = self._told.setdefault(service, set())
        if where in told:
            return False
        told.add(where)
        return True

    def is_down(self, service: Service) -> bool:
        """True between a failure of ``service`` and its next answer."""
        return service in self._down


def describe(exc: BaseException) -> str:
    """The exception's type and first line, at most 200 characters (never a traceback)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


async def waiting_out(
    outages: Outages,
    attempt: Callable[[], Awaitable[T]],
    *,
    services: tuple[Service, ...],
    seconds: float,
) -> T:
    """``attempt()``, tried again (pauses growing to 5 s, with jitter: ``storage.patiently``, the
    one retry helper) while it fails because one of ``services`` is unreachable, for up to
    ``seconds``; the outage is recorded in ``outages`` (one line). Any other failure, or one
    past the deadline, is raised.

    For work owed to a thread that must not be dropped for an outage (a decided call's card
    and answer): ``attempt`` must be safe to repeat.
    """

    def outage(exc: BaseException) -> None:
        service = unavailable(exc)
        if service is not None:
            outages.down(service, exc)

    return await patiently(
        attempt,
        retry_on=lambda exc: unavailable(exc) in services,
        seconds=seconds,
        first=0.2,
        on_outage=outage,
    )
