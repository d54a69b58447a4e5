"""``/readyz`` tells the truth at once: an outage the bot noticed is not hidden by the cache."""

from __future__ import annotations

import pytest

from bot.ops import _ready
from bot.ops._outage import Outages
from bot.ops._ready import Readiness


async def test_an_outage_noticed_elsewhere_turns_readiness_503_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_ready, "CACHE_SECONDS", 3600.0)  # the cache alone would say "ok"
    storage_up = True

    async def storage() -> bool:
        if not storage_up:
            raise ConnectionRefusedError("storage is down")
        return True

    async def slack() -> bool:
        return True

    outages = Outages()
    readiness = Readiness({"storage": storage, "slack": slack}, {}, outages)
    assert await readiness.checks() == {"storage": "ok", "slack": "ok"}
    storage_up = False
    assert (await readiness.checks())["storage"] == "ok"  # cached: nothing noticed yet
    outages.down("storage", "a request failed on it")  # e.g. a mention whose write failed
    checks = await readiness.checks()
    assert checks["storage"] != "ok" and checks["slack"] == "ok"


async def test_the_cache_still_spares_the_dependencies_while_nothing_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_ready, "CACHE_SECONDS", 3600.0)
    rounds = 0

    async def storage() -> bool:
        nonlocal rounds
        rounds += 1
        return True

    readiness = Readiness({"storage": storage}, {}, Outages())
    for _ in range(5):
        await readiness.checks()
    assert rounds == 1
