"""The chaos test's world: ``python -m bot`` processes to kill and pause, and Slack delivering
to them as Slack does (an event that gets no 2xx is delivered again, marked as a retry)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from tests.bot.harness import SECRET
from tests.fakes.slack_signing import event_request, interaction_request
from tests.own_servers import free_port

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Instance:
    """One bot process; it keeps its port across restarts."""

    port: int = field(default_factory=free_port)
    process: asyncio.subprocess.Process | None = None
    paused: bool = False
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def up(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self.paused


class Fleet:
    """``count`` bot processes sharing ``env``; each logs to its own file in ``logs``."""

    def __init__(self, env: dict[str, str], count: int, logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.instances = [Instance() for _ in range(count)]
        self.restarts = 0

    async def start(self, instance: Instance, http: aiohttp.ClientSession) -> None:
        self.restarts += 1
        instance.log = self.logs / f"bot-{instance.port}-{self.restarts}.log"
        with instance.log.open("wb") as log:
            instance.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                env={**self.env, "PORT": str(instance.port)},
                cwd=ROOT,
                stdout=log,
                stderr=log,
            )
        instance.paused = False
        deadline = time.monotonic() + 180  # a loaded machine starts Python slowly
        while time.monotonic() < deadline:
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(f"{instance.url}/healthz") as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.05)
        await self.kill(instance)
        tail = instance.log.read_text(errors="replace")[-2000:]
        raise AssertionError(f"bot on {instance.port} did not start:\n{tail}")

    async def kill(self, instance: Instance) -> None:
        if instance.process is not None and instance.process.returncode is None:
            if instance.paused:
                instance.process.send_signal(signal.SIGCONT)
            instance.process.kill()
            await instance.process.wait()
        instance.paused = False

    def pause(self, instance: Instance) -> None:
        if instance.up and instance.process is not None:
            instance.process.send_signal(signal.SIGSTOP)
            instance.paused = True

    def resume(self, instance: Instance) -> None:
        if instance.paused and instance.process is not None:
            instance.process.send_signal(signal.SIGCONT)
            instance.paused = False

    async def close(self) -> None:
        for instance in self.instances:
            self.resume(instance)
            if instance.process is not None and instance.process.returncode is None:
                instance.process.terminate()
        for instance in self.instances:
            if instance.process is not None:
                try:
                    await asyncio.wait_for(instance.process.wait(), 40)
                except TimeoutError:
                    instance.process.kill()
                    await instance.process.wait()

    def live(self) -> list[Instance]:
        return [i for i in self.instances if i.up]


class SlackDelivery:
    """Posts to the fleet the way Slack would; counts what it could not deliver."""

    def __init__(self, fleet: Fleet, http: aiohttp.ClientSession, pick: Any) -> None:
        self.fleet = fleet
        self.http = http
        self.pick = pick  # random.Random().choice, seeded by the test
        self.undelivered = 0

    async def _post(self, instance: Instance, body: str, headers: dict[str, str]) -> int:
        try:
            async with asyncio.timeout(10):  # a paused instance never answers: Slack gives up
                async with self.http.post(
                    f"{instance.url}/slack/events", data=body, headers=headers
                ) as response:
                    await response.read()
                    return response.status
        except (aiohttp.ClientError, OSError, TimeoutError):
            return 0

    async def event(self, envelope: dict[str, Any], *, tries: int = 6) -> bool:
        """Deliver an event; on no 2xx deliver it again (to any instance), as Slack retries."""
        for attempt in range(tries):
            live = self.fleet.live() or self.fleet.instances
            body, headers = event_request(envelope, SECRET, retry_num=attempt or None)
            if 200 <= await self._post(self.pick(live), body, headers) < 300:
                return True
            await asyncio.sleep(0.5 * (attempt + 1))
        self.undelivered += 1
        return False

    async def interaction(self, payload: dict[str, Any], instance: Instance | None = None) -> int:
        """A click or a submit: Slack does not retry those (the person clicks again)."""
        target = instance or self.pick(self.fleet.live() or self.fleet.instances)
        body, headers = interaction_request(payload, SECRET)
        return await self._post(target, body, headers)


def bot_env(
    *, slack_url: str, storage_url: str, redis_url: str, executions: Path, lease: int
) -> dict[str, str]:
    env = {
        **os.environ,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack_url,
        "STORAGE_URL": storage_url,
        "REDIS_URL": redis_url,
        "BOT_AGENT": "tests.bot.ops.chaos_agent:agent",
        "EXECUTIONS_FILE": str(executions),
        "CLAIM_LEASE_SECONDS": str(lease),
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "INFO",
        "HOST": "127.0.0.1",
    }
    for name in ("SLACK_APP_TOKEN", "APPROVERS", "API_TOKEN", "API_TOKENS", "OPENAI_API_KEY"):
        env.pop(name, None)
    return env
