"""``AgentStream``: one run's chunks, readable by several consumers, plus its result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agents._chunks import Chunk, TextDeltaChunk
from agents._results import RunResult


class AgentStream:
    """What ``stream()`` and the decision methods return.

    ``full_stream`` and ``text_stream`` each see the whole run from its first chunk, however
    late they start; ``await result()`` waits for the end. The run proceeds whether or not
    anyone reads.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        """The run this stream belongs to."""
        self._chunks: list[Chunk] = []
        self._changed = asyncio.Condition()
        self._result: asyncio.Future[RunResult] = asyncio.get_running_loop().create_future()

    # -- producer side ---------------------------------------------------------------------
    async def emit(self, chunk: Chunk) -> None:
        """Append ``chunk`` and wake every reader."""
        self._chunks.append(chunk)
        async with self._changed:
            self._changed.notify_all()

    async def close(self, result: RunResult) -> None:
        if not self._result.done():
            self._result.set_result(result)
        async with self._changed:
            self._changed.notify_all()

    # -- consumer side ---------------------------------------------------------------------
    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        """Every chunk of the run, in order."""
        return self._iterate()

    @property
    def text_stream(self) -> AsyncIterator[str]:
        """The text deltas of the run, in order."""
        return self._texts()

    async def result(self) -> RunResult:
        """Wait for the run to finish (or suspend) and return its ``RunResult``."""
        return await asyncio.shield(self._result)

    async def _iterate(self) -> AsyncIterator[Chunk]:
        position = 0
        while True:
            while position < len(self._chunks):
                yield self._chunks[position]
                position += 1
            if self._result.done():
                return
            async with self._changed:
                if position >= len(self._chunks) and not self._result.done():
                    await self._changed.wait()

    async def _texts(self) -> AsyncIterator[str]:
        async for chunk in self._iterate():
            if isinstance(chunk, TextDeltaChunk):
                yield chunk.text
