"""``python -m bot`` as a real subprocess on a free loopback port, stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest


@dataclass
class BotProcess:
    """A running bot process: its port, an HTTP session, its first /healthz answer."""

    port: int
    http: aiohttp.ClientSession
    health: dict[str, Any] = field(default_factory=dict)
    returncode: int | None = None
    """Exit status after SIGTERM (set when the ``async with`` block ends)."""
    stderr: str = ""
    """Everything the process logged (set when the ``async with`` block ends)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def serve_bot_process(env: dict[str, str], cwd: Path) -> AsyncIterator[BotProcess]:
    """Start ``python -m bot`` with ``env``, wait for /healthz, SIGTERM it on exit."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env={**env, "PORT": str(port)},
        cwd=cwd,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with aiohttp.ClientSession() as http:
            bot = BotProcess(port=port, http=http)
            bot.health = await _first_health(bot)
            yield bot
        process.send_signal(signal.SIGTERM)
        bot.returncode = await asyncio.wait_for(process.wait(), 20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        assert process.stderr is not None
        bot.stderr = (await process.stderr.read()).decode()


async def _first_health(bot: BotProcess) -> dict[str, Any]:
    deadline = time.monotonic() + 120  # bounded; a loaded machine starts Python slowly
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientConnectionError):
            async with bot.http.get(f"{bot.url}/healthz") as response:
                body: dict[str, Any] = await response.json()
                return body
        await asyncio.sleep(0.05)
    pytest.fail("python -m bot did not start serving /healthz")
