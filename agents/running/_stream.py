"""``AgentStream``: one run's chunks, readable by several consumers, plus its result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agents._results import RunResult
from agents.running._chunks import Chunk, TextDeltaChunk
from agents.stored._fence import StreamFence


class AgentStream:
    """What ``stream()`` and the decision methods return.

    ``full_stream`` and ``text_stream`` each see the whole run from its first chunk, however
    late they start; ``await result()`` waits for the end. The run proceeds whether or not
    anyone reads.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        """The run this stream belongs to."""
        self.fence = StreamFence()
        """The leases the run's work ran under: an edge checks ``fence.current()`` before it
        announces anything of this stream (a taken-over owner's announcements are dropped)."""
        self._chunks: list[Chunk] = []
        self._result: RunResult | None = None
        self._ended = asyncio.Event()
        # One future per reader waiting for the next chunk. A run emits a dozen chunks per
        # stretch, mostly while nobody reads: waking nobody must cost nothing (no lock).
        self._waiters: list[asyncio.Future[None]] = []

    # -- producer side ---------------------------------------------------------------------
    # Plain methods, not coroutines: the producer never waits (a run emits a dozen chunks per
    # stretch, and awaiting a coroutine that cannot suspend costs a coroutine each time).
    def emit(self, chunk: Chunk) -> None:
        """Append ``chunk`` and wake every reader."""
        self._chunks.append(chunk)
        self._wake()

    def close(self, result: RunResult) -> None:
        if self._result is None:
            self._result = result
        self._ended.set()
        self._wake()

    def _wake(self) -> None:
        if not self._waiters:
            return
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():  # a cancelled reader's future is done
                waiter.set_result(None)

    async def _changed(self) -> None:
        """Wait for the next chunk or the end (cancelling it cancels only this reader)."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

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
        await self._ended.wait()  # each waiter its own future: cancelling one spares the rest
        assert self._result is not None
        return self._result

    async def _iterate(self) -> AsyncIterator[Chunk]:
        position = 0
        while True:
            while position < len(self._chunks):
                yield self._chunks[position]
                position += 1
            if self._result is not None:
                return
            await self._changed()

    async def _texts(self) -> AsyncIterator[str]:
        async for chunk in self._iterate():
            if isinstance(chunk, TextDeltaChunk):
                yield chunk.text
