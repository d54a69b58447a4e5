"""``python -m bot`` as a real subprocess on a free loopback port, stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
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


START_SECONDS = 120.0
"""How long ``python -m bot`` may take to answer /healthz: a bound for a wedged start, not a
speed check (on a loaded two-core machine its imports alone have taken over 10 s)."""


@asynccontextmanager
async def serve_bot_process(env: dict[str, str], cwd: Path) -> AsyncIterator[BotProcess]:
    """Start ``python -m bot`` with ``env``, wait for /healthz, SIGTERM it on exit.

    Its stderr is read all along (a full pipe would block a bot that logs a lot)."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env={**env, "PORT": str(port)},
        cwd=cwd,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    logged = asyncio.create_task(process.stderr.read())
    bot: BotProcess | None = None
    try:
        async with aiohttp.ClientSession() as http:
            bot = BotProcess(port=port, http=http)
            bot.health = await _first_health(bot, process, logged)
            yield bot
        process.send_signal(signal.SIGTERM)
        bot.returncode = await asyncio.wait_for(process.wait(), 20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        stderr = (await logged).decode()
        if bot is not None:
            bot.stderr = stderr


async def _first_health(
    bot: BotProcess, process: asyncio.subprocess.Process, logged: asyncio.Task[bytes]
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_SECONDS
    while loop.time() < deadline:
        with contextlib.suppress(aiohttp.ClientConnectionError):
            async with bot.http.get(f"{bot.url}/healthz") as response:
                body: dict[str, Any] = await response.json()
                return body
        if process.returncode is not None:
            stderr = (await logged).decode()
            pytest.fail(f"python -m bot exited ({process.returncode}) before serving:\n{stderr}")
        await asyncio.sleep(0.05)
    pytest.fail(f"python -m bot did not serve /healthz within {START_SECONDS:.0f} s")
