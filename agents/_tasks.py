"""One place that owns background run tasks: strong references, drain on shutdown."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class TaskSet:
    """Keeps every task it starts alive until it finishes (asyncio holds only weak refs)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def start(self, coroutine: Coroutine[Any, Any, Any], *, name: str | None = None) -> None:
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for every task started so far (and those they start)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
