"""One live MCP client session, entered and left inside its own task.

The SDK's transports run anyio task groups, which must be exited by the task that entered them;
tool calls come from whatever task runs the agent. So a ``Connection`` owns a task that enters
the ``mcp.Client``, waits until asked to close, and leaves it. It also watches the transport's
read stream: once the server's side ended (the process died), ``ended`` is set and nothing
more is sent on it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.session import IncomingMessage
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.message import SessionMessage

Transport = Callable[[], AbstractAsyncContextManager[TransportStreams]]
"""Makes a fresh transport (a subprocess, an HTTP session) for each connection."""


class _WatchedRead:
    """A read stream that sets ``ended`` when the server's side closes."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], ended: asyncio.Event):
        self._inner = inner
        self._ended = ended

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except Exception:
            self._ended.set()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except Exception as exc:  # end of stream, as the SDK's memory streams report it
            raise StopAsyncIteration from exc

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _watched(transport: Transport, ended: asyncio.Event) -> AsyncIterator[TransportStreams]:
    try:
        async with transport() as (read, write):
            yield _WatchedRead(read, ended), write
    finally:
        ended.set()


class Connection:
    """A connected ``mcp.Client`` held open by a task of its own."""

    def __init__(
        self, client: Client, task: asyncio.Task[None], stop: asyncio.Event, ended: asyncio.Event
    ):
        self.client = client
        self.ended = ended
        self._task = task
        self._stop = stop

    @classmethod
    async def open(
        cls,
        transport: Transport,
        on_message: Callable[[IncomingMessage], Any],
        connect_timeout: float,
    ) -> Connection:
        """Start the transport and the handshake; raises what the SDK raised, or TimeoutError."""
        ended, stop = asyncio.Event(), asyncio.Event()
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()

        async def handler(message: IncomingMessage) -> None:
            on_message(message)

        async def hold() -> None:
            try:
                client = Client(
                    _watched(transport, ended),
                    mode="legacy",
                    cache=None,
                    message_handler=handler,
                )
                async with client:
                    ready.set_result(client)
                    await stop.wait()
            except Exception as exc:
                if not ready.done():
                    ready.set_exception(exc)
            finally:
                ended.set()

        task = asyncio.create_task(hold())
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), connect_timeout)
        except BaseException:
            stop.set()
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise
        return cls(client, task, stop, ended)

    async def close(self) -> None:
        """Leave the client (stops a stdio server process); never raises."""
        self._stop.set()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(self._task, 10)
