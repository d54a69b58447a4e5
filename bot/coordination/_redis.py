"""Coordination across instances with ``REDIS_URL``: de-duplication marks (``SET NX EX``) and
one-at-a-time Slack threads (``redis.asyncio.lock.Lock``: a token per holder, an expiry, released
only by its owner, renewed while the work runs).

Without ``REDIS_URL`` the bot uses its storage for marks and in-process locks, which is right
for one instance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError, RedisError

from bot.coordination._dedupe import Deduper
from bot.coordination._locks import ThreadLocks

logger = logging.getLogger(__name__)

DEFAULT_PREFIX = "countersign:slack:"
CONNECT_TIMEOUT_SECONDS = 2.0
"""A Redis that does not accept the connection within this counts as down."""
COMMAND_TIMEOUT_SECONDS = 5.0
"""How long one Redis command may take: a Redis that stopped answering (frozen, or its host
cut off) is an outage after this, never a click or a thread waiting forever."""
LEASE_SECONDS = 30.0
"""A thread lock expires this long after its holder stops renewing it (crash); the bot passes
``CLAIM_LEASE_SECONDS`` so a crashed instance's thread lapses with its claims (SPEC 3.4)."""


class RedisMarks:
    """``add_if_absent`` as one ``SET key value NX EX ttl``: true for exactly one caller."""

    def __init__(self, client: aioredis.Redis, *, prefix: str = DEFAULT_PREFIX) -> None:
        self._r = client
        self._p = prefix

    async def add_if_absent(self, key: str, value: str, ttl_seconds: float) -> bool:
        ttl = max(1, int(ttl_seconds))
        return bool(await self._r.set(f"{self._p}mark:{key}", value, nx=True, ex=ttl))


class RedisThreadLocks:
    """``ThreadLocks`` shared by every instance on the same Redis."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: float = 0.05,
    ) -> None:
        self._r = client
        self._p = prefix
        self._lease = lease_seconds
        self._poll = poll_seconds

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        # thread_local=False: the token must belong to this holder, not to the event loop's thread
        lock = Lock(
            self._r,
            f"{self._p}lock:{thread_id}",
            timeout=self._lease,
            sleep=self._poll,
            thread_local=False,
        )
        await lock.acquire()
        renewal = asyncio.get_running_loop().create_task(self._renew(lock))
        try:
            yield
        finally:
            renewal.cancel()
            await asyncio.gather(renewal, return_exceptions=True)
            try:
                await lock.release()
            except LockError:
                logger.warning("the lock of %s expired while held (work took too long)", thread_id)
            except (RedisError, OSError) as exc:  # it lapses by its lease: nothing is lost
                logger.info("could not release the lock of %s (%s)", thread_id, exc)

    async def _renew(self, lock: Lock) -> None:
        while True:
            await asyncio.sleep(self._lease / 3)
            await lock.reacquire()


@dataclass(frozen=True, kw_only=True)
class Shared:
    """What ``REDIS_URL`` provides; both None without it (the single-instance defaults)."""

    locks: ThreadLocks | None = None
    dedupe: Deduper | None = None
    ping: Callable[[], Awaitable[bool]] | None = None
    """True when Redis answers (``/readyz``'s ``redis`` check)."""


@contextlib.asynccontextmanager
async def shared_coordination(
    redis_url: str | None, *, lease_seconds: float = LEASE_SECONDS
) -> AsyncIterator[Shared]:
    """Connect to ``REDIS_URL`` (``?key_prefix=`` keeps deployments apart); closed on exit.

    ``lease_seconds`` is how long a thread lock outlives a holder that stopped renewing it:
    the claim lease, so the thread of a crashed instance is free as soon as its calls are.
    """
    if not redis_url:
        yield Shared()
        return
    url, prefix = _split_prefix(redis_url)
    client = aioredis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS, socket_timeout=COMMAND_TIMEOUT_SECONDS
    )

    async def ping() -> bool:
        return bool(await client.ping())

    try:
        try:
            await ping()
        except (RedisError, OSError) as exc:
            # not fatal: /readyz answers 503 until Redis answers, and the client reconnects
            logger.warning(
                "REDIS_URL does not answer (%s): check host, port and password and that the "
                "Redis server is running; serving anyway, not ready until it answers",
                type(exc).__name__,
            )
        yield Shared(
            locks=RedisThreadLocks(client, prefix=prefix, lease_seconds=lease_seconds),
            dedupe=Deduper(RedisMarks(client, prefix=prefix)),
            ping=ping,
        )
    finally:
        await client.aclose()


def _split_prefix(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    prefixes = [v for k, v in query if k == "key_prefix"]
    rest = [(k, v) for k, v in query if k != "key_prefix"]
    return urlunsplit(parts._replace(query=urlencode(rest))), (prefixes or [DEFAULT_PREFIX])[-1]
