"""Start the local workspace in-process (``running_bot`` with no Slack token) and talk to it
over HTTP as the page does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp

from bot import Services, load_settings
from bot._serve import running_bot
from bot.local import WORKSPACE, Workspace

ALEX = "U0ALEX"
SAM = "U0SAM"
ROBIN = "U0ROBIN"


@dataclass
class Local:
    """A running local workspace and an HTTP session to it."""

    services: Services
    url: str
    http: aiohttp.ClientSession
    workspace: Workspace

    async def settle(self) -> None:
        await self.services.runner.drain()

    async def state(self, user: str = ALEX) -> dict[str, Any]:
        async with self.http.get(f"{self.url}/_local/state", params={"user": user}) as response:
            assert response.status == 200
            body: dict[str, Any] = await response.json()
            return body

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        async with self.http.post(f"{self.url}{path}", json=body) as response:
            assert response.status == 200, await response.text()
            answer: dict[str, Any] = await response.json()
        await self.settle()
        return answer

    async def say(self, text: str, *, user: str = ALEX, thread_ts: str | None = None) -> str:
        answer = await self.post(
            "/_local/messages", {"user": user, "text": text, "thread_ts": thread_ts}
        )
        assert answer["delivered"] and set(answer["delivered"]) == {200}
        return str(answer["ts"])

    async def say_in(
        self, channel: str, text: str, *, user: str = ALEX, delivered: int = 200
    ) -> str:
        """Write ``text`` top-level in ``channel`` (a person's Messages tab: a new
        conversation); every delivery answered ``delivered``. Returns its ``ts``."""
        answer = await self.post(
            "/_local/messages", {"user": user, "text": text, "channel": channel}
        )
        assert set(answer["delivered"]) == {delivered}, answer
        return str(answer["ts"])

    async def thread(self, ts: str, user: str = ALEX) -> list[dict[str, Any]]:
        messages = (await self.state(user))["messages"]
        return [m for m in messages if m["thread_ts"] == ts and m["ts"] != ts]

    async def card(self, ts: str) -> dict[str, Any]:
        return next(m for m in await self.thread(ts) if _has(m, "actions") or "Approv" in m["text"])

    async def click(self, message: dict[str, Any], action_id: str, user: str = SAM) -> None:
        answer = await self.post(
            "/_local/actions", {"user": user, "ts": message["ts"], "action_id": action_id}
        )
        assert answer["ok"], answer

    async def click_shown(
        self, message: dict[str, Any], action_id: str, user: str = SAM
    ) -> dict[str, Any]:
        """Click a button of ``message`` as the page shows it (block id, action id, value),
        however the message reads now (a page not refreshed yet)."""
        block, button = next(
            (b, e)
            for b in message["blocks"]
            for e in b.get("elements") or []
            if e.get("action_id") == action_id
        )
        body = {"block_id": block.get("block_id"), "value": button.get("value")}
        return await self.post(
            "/_local/actions", {"user": user, "ts": message["ts"], "action_id": action_id, **body}
        )


def _has(message: dict[str, Any], block_type: str) -> bool:
    return any(b.get("type") == block_type for b in message["blocks"])


def texts(messages: list[dict[str, Any]], keep: Callable[[dict[str, Any]], bool] = bool) -> str:
    """Every message's text and block texts, one string (for ``in`` checks)."""
    parts = []
    for m in messages:
        if not keep(m):
            continue
        parts.append(m["text"])
        for block in m["blocks"]:
            parts.append(str(block))
    return "\n".join(parts)


@asynccontextmanager
async def local_workspace(**env: str) -> AsyncIterator[Local]:
    """``python -m bot`` with no token, in-process, on a free loopback port."""
    settings = load_settings({"STORAGE_URL": "memory://", "PORT": "0", **env})
    async with running_bot(settings) as (services, runner):
        [address] = runner.addresses
        async with aiohttp.ClientSession() as http:
            yield Local(
                services=services,
                url=f"http://127.0.0.1:{address[1]}",
                http=http,
                workspace=runner.app[WORKSPACE],
            )
