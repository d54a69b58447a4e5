"""``GET /readyz``: 200 only when storage, Redis (when configured) and Slack ``auth.test`` answer.

Each check has a short timeout and the answer is kept for ``CACHE_SECONDS`` (a load balancer
probing every second costs one round of checks), unless the bot noticed an outage since (a
request that failed on storage or Redis turns ``/readyz`` 503 at once, not a second later).
The body names what fails::

    {"ready": false, "checks": {"storage": "ok", "redis": "unreachable (ConnectionError: …)",
                                "slack": "ok"}}

Extra probes (``HEALTH_CHECKS`` of the web app: ``redis``, Socket Mode's ``socket``) return
True when fine; False or an exception fails them. A check's outcome also feeds the bot's
``Outages`` (one log line per outage and one per recovery), so a dependency that comes back is
noticed here too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web

from bot.ops._outage import Outages, Service, describe, unavailable

READY_PATH = "/readyz"
CHECK_TIMEOUT_SECONDS = 2.0
"""How long one dependency may take to answer before it counts as failed."""
CACHE_SECONDS = 1.0
"""How long one round of checks is reused."""
_SERVICES: dict[str, Service] = {"storage": "storage", "redis": "redis", "slack": "slack"}

Probe = Callable[[], Awaitable[bool]]


class Readiness:
    """The checks behind ``/readyz``: ``probes`` (storage, slack) and ``extra`` ones, which are
    read at every round (added late). Each outcome feeds ``outages``."""

    def __init__(
        self, probes: Mapping[str, Probe], extra: Mapping[str, Probe], outages: Outages
    ) -> None:
        self._probes = probes
        self._extra = extra
        self._outages = outages
        self._last: tuple[float, int, dict[str, str]] | None = None
        self._lock = asyncio.Lock()

    async def checks(self) -> dict[str, str]:
        """``{"storage": "ok" | "<what failed>", "slack": …, …}``; cached ``CACHE_SECONDS``."""
        async with self._lock:
            now = asyncio.get_running_loop().time()
            if self._last is not None:
                at, noticed, cached = self._last
                if now - at < CACHE_SECONDS and noticed == self._outages.noticed:
                    return cached  # no outage noticed since: still true
            probes: dict[str, Probe] = dict(self._probes)
            probes.update(self._extra)
            names = list(probes)
            results = await asyncio.gather(*(self._run(n, probes[n]) for n in names))
            checks = dict(zip(names, results, strict=True))
            noticed = self._outages.noticed
            self._last = (asyncio.get_running_loop().time(), noticed, checks)
            return checks

    async def _run(self, name: str, probe: Probe) -> str:
        service = _SERVICES.get(name)
        try:
            async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
                ok = await probe()
        except TimeoutError:
            failure = f"no answer within {CHECK_TIMEOUT_SECONDS:g} s"
        except Exception as exc:  # any failure is the answer of the check
            failure = f"unreachable ({describe(exc)})" if unavailable(exc) else describe(exc)
        else:
            if ok:
                if service is not None:
                    self._outages.up(service)
                return "ok"
            failure = "not connected"
        if service is not None:
            self._outages.down(service, failure)
        return failure


def install_readiness(
    app: web.Application,
    probes: Mapping[str, Probe],
    extra: dict[str, Probe],
    outages: Outages,
) -> None:
    """Serve ``GET /readyz`` on ``app``: ``probes`` and ``extra`` return True when fine."""
    readiness = Readiness(probes, extra, outages)

    async def readyz(request: web.Request) -> web.Response:
        checks = await readiness.checks()
        ready = all(v == "ok" for v in checks.values())
        return web.json_response({"ready": ready, "checks": checks}, status=200 if ready else 503)

    app.router.add_get(READY_PATH, readyz)
