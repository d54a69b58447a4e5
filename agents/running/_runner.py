"""``Runner``: the one place background runs go.

It keeps strong references to its tasks (asyncio only keeps weak ones), bounds how many run at
once, logs failures, and drains on shutdown. An ``Agent`` starts every run it returns a stream
for on its runner; a sub-agent's runs are driven inside its supervisor's task and take no slot
of their own, so a supervisor waiting for its sub-agent can never starve the runner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from agents.errors import RunnerClosed

logger = logging.getLogger(__name__)


class Runner:
    """Bounded, tracked background tasks.

    Example:
        >>> runner = Runner(max_concurrency=16)
        >>> agent = Agent(id="ops", model=model, runner=runner)   # doctest: +SKIP
        >>> await runner.close(grace_seconds=10)                   # doctest: +SKIP
    """

    def __init__(self, max_concurrency: int = 32) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self._slots = asyncio.Semaphore(max_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def pending(self) -> int:
        """How many submitted jobs have not finished."""
        return len(self._tasks)

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called: ``submit`` raises ``RunnerClosed``."""
        return self._closed

    def submit(
        self, work: Coroutine[Any, Any, object], *, name: str = "job", bounded: bool = True
    ) -> None:
        """Run ``work`` in the background (waits for a free slot; never blocks the caller).

        ``bounded=False`` is for work that someone holding a slot may be waiting for (an
        agent's run, whose stream a job consumes): it is tracked, drained and closed like any
        job but never waits for a slot, so a full runner cannot deadlock on its own jobs.
        """
        if self._closed:
            work.close()
            raise RunnerClosed(name)
        task = asyncio.get_running_loop().create_task(self._run(work, name, bounded), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, work: Coroutine[Any, Any, object], name: str, bounded: bool) -> None:
        if not bounded:
            await self._guarded(work, name)
            return
        async with self._slots:
            await self._guarded(work, name)

    @staticmethod
    async def _guarded(work: Coroutine[Any, Any, object], name: str) -> None:
        try:
            await work
        except asyncio.CancelledError:
            logger.warning("background job %s was cancelled", name)
            raise
        except Exception:
            logger.exception("background job %s failed", name)

    async def drain(self) -> None:
        """Wait until every job (including jobs started by jobs) has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self, grace_seconds: float = 30.0) -> None:
        """Stop accepting work, wait up to ``grace_seconds``, then cancel what is left."""
        self._closed = True
        try:
            async with asyncio.timeout(grace_seconds):
                await self.drain()
        except TimeoutError:
            tasks = list(self._tasks)
            logger.warning("cancelling %d background jobs still running at shutdown", len(tasks))
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
