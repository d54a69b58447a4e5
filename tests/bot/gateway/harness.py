"""The gateway as ``python -m bot gateway`` serves it (``running_bot`` with ``GATEWAY=true``),
on 127.0.0.1, against the fake Slack Web API; MCP clients no one here wrote talk to it: the
official Python ``mcp`` client (``mcp_session``) and the official TypeScript SDK's client
(``ts_client``, ``node ts_client.mjs``, from ``tests/node_modules``: ``npm ci`` in ``tests/``),
in front of the reference servers ``@modelcontextprotocol/server-everything`` and
``-filesystem`` (``reference_servers``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from agents import Agent
from agents.models import ScriptedModel
from bot import Services, load_settings
from bot._serve import running_bot
from tests.bot.harness import SECRET, click_payload
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import interaction_request

TESTS = Path(__file__).resolve().parents[2]
NODE_MODULES = TESTS / "node_modules" / "@modelcontextprotocol"
TS_CLIENT = Path(__file__).with_name("ts_client.mjs")
OPS_SERVER = TESTS / "tools" / "mcp_servers" / "ops.py"
GATEWAY_CHANNEL = "CGATE"
PEOPLE = {"alice-token-0001": "U0ALICE", "bob-token-00002": "U0BOB", "carol-token-0003": "U0CAROL"}
ALICE, BOB, CAROL = "alice-token-0001", "bob-token-00002", "carol-token-0003"
SERVICE = "service-token-0004"


def node() -> str:
    """The ``node`` binary, with the test packages installed (never skipped: a failure says
    what to run)."""
    binary = shutil.which("node")
    if binary is None or not (NODE_MODULES / "sdk").is_dir():
        pytest.fail("the gateway tests need node and `npm ci` in tests/ (make install runs it)")
    return binary


def reference_servers(files: Path) -> str:
    """``[[mcp_servers]]`` of the reference servers over stdio: ``everything`` and ``files``
    (the filesystem server, allowed ``files``)."""
    everything = NODE_MODULES / "server-everything" / "dist" / "index.js"
    filesystem = NODE_MODULES / "server-filesystem" / "dist" / "index.js"
    return server_entry("everything", [node(), str(everything), "stdio"]) + server_entry(
        "files", [node(), str(filesystem), str(files)]
    )


def server_entry(name: str, command: list[str], env: dict[str, str] | None = None) -> str:
    """One ``[[mcp_servers]]`` entry started as ``command``."""
    entry = f'[[mcp_servers]]\nname = "{name}"\ncommand = {json.dumps(command)}\n'
    if env:
        entry += "env = { " + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + " }\n"
    return entry + "\n"


def ops_server(call_log: Path, down_while: Path | None = None) -> str:
    """``[[mcp_servers]]`` of the suite's own ``ops`` server (it can redefine a tool and add
    one, which the reference servers cannot); every call it runs is a line of ``call_log``;
    while ``down_while`` exists it refuses to start."""
    env = {"OPS_CALL_LOG": str(call_log)}
    if down_while is not None:
        env["OPS_DOWN_WHILE"] = str(down_while)
    return server_entry("ops", [sys.executable, str(OPS_SERVER)], env)


def tokens_file(path: Path) -> Path:
    """``API_TOKENS`` of alice, bob and carol."""
    entries = "".join(
        f'[[tokens]]\nuser = "{user}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n\n'
        for token, user in PEOPLE.items()
    )
    path.write_text(entries, encoding="utf-8")
    return path


def gateway_env(slack: FakeSlackAPI, tmp_path: Path, policy: str, **extra: str) -> dict[str, str]:
    """The environment of a gateway bot in HTTP mode against ``slack``."""
    (tmp_path / "countersign.toml").write_text(policy, encoding="utf-8")
    return {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "GATEWAY": "true",
        "GATEWAY_CHANNEL": GATEWAY_CHANNEL,
        "GATEWAY_HOLD_SECONDS": "30",
        "API_TOKENS": str(tokens_file(tmp_path / "tokens.toml")),
        "API_TOKEN": SERVICE,
        "POLICY_FILE": str(tmp_path / "countersign.toml"),
        "STORAGE_URL": "memory://",
        "HOST": "127.0.0.1",
        "PORT": "0",
        **extra,
    }


@dataclass
class Gateway:
    """A running gateway bot, the fake Slack it posts to, and what its cards look like."""

    slack: FakeSlackAPI
    services: Services
    url: str
    carded: asyncio.Event = field(default_factory=asyncio.Event)

    async def settle(self) -> None:
        await self.services.runner.drain()

    def cards(self) -> list[PostedMessage]:
        """The gateway's cards: messages of its own in ``GATEWAY_CHANNEL``, oldest first."""
        return [
            m
            for m in self.slack.messages.values()
            if m.channel == GATEWAY_CHANNEL and m.thread_ts is None and m.metadata
        ]

    async def next_card(self, count: int = 1) -> PostedMessage:
        """Wait until ``count`` cards were posted and recorded; the last one."""
        while len(self.cards()) < count:
            self.carded.clear()
            await self.carded.wait()
        card = self.cards()[count - 1]
        assert card.metadata is not None
        ids = card.metadata["event_payload"]
        for _ in range(1000):  # posted; its record is written right after
            if await self.services.cards.find(ids["run_id"], ids["call"]) is not None:
                break
            await asyncio.sleep(0.01)
        return card

    def card(self, ts: str) -> PostedMessage:
        """A card as it reads now."""
        return self.slack.messages[ts]

    async def click(self, card: PostedMessage, action_id: str, *, user: str) -> None:
        """``user`` clicks a button of ``card`` (a signed interaction, as Slack sends it)."""
        payload = click_payload(card, action_id, user=user)
        body, headers = interaction_request(payload, SECRET)
        async with httpx2.AsyncClient() as http:
            response = await http.post(f"{self.url}/slack/events", content=body, headers=headers)
        assert response.status_code == 200, response.text
        await self.settle()

    async def decline(self, card: PostedMessage, *, user: str, reason: str) -> None:
        """Click Decline, then submit the modal it opened with ``reason``."""
        await self.click(card, "approval:decline", user=user)
        view = self.slack.calls_to("views.open")[-1]["view"]
        payload = {
            "type": "view_submission",
            "team": {"id": "T1", "domain": "test"},
            "user": {"id": user, "username": user.lower(), "team_id": "T1"},
            "api_app_id": "A1",
            "token": "legacy",
            "trigger_id": "trigger-2",
            "view": {
                "id": "V1",
                "type": "modal",
                "team_id": "T1",
                "callback_id": view["callback_id"],
                "private_metadata": view.get("private_metadata", ""),
                "blocks": view.get("blocks", []),
                "state": {
                    "values": {"reason": {"value": {"type": "plain_text_input", "value": reason}}}
                },
                "hash": "h1",
            },
        }
        body, headers = interaction_request(payload, SECRET)
        async with httpx2.AsyncClient() as http:
            response = await http.post(f"{self.url}/slack/events", content=body, headers=headers)
        assert response.status_code == 200, response.text
        await self.settle()

    async def api(self, path: str, body: dict[str, Any], *, token: str) -> httpx2.Response:
        """``POST /api/...`` with ``token``."""
        async with httpx2.AsyncClient(timeout=60) as http:
            return await http.post(
                f"{self.url}/api{path}", json=body, headers={"Authorization": f"Bearer {token}"}
            )


@asynccontextmanager
async def gateway_bot(slack: FakeSlackAPI, env: dict[str, str]) -> AsyncIterator[Gateway]:
    """The bot of ``env`` (from ``gateway_env``), running in this process against ``slack``."""
    agent = Agent(id="ops", model=ScriptedModel([]))
    async with running_bot(load_settings(env), agent=agent) as (services, runner):
        [address] = runner.addresses
        url = f"http://127.0.0.1:{address[1]}"
        gateway = Gateway(slack=slack, services=services, url=url)

        async def posted(args: dict[str, Any]) -> None:
            asyncio.get_running_loop().call_soon(gateway.carded.set)

        slack.on("chat.postMessage", posted)
        yield gateway


@asynccontextmanager
async def mcp_session(
    url: str,
    token: str | None,
    *,
    on_message: Callable[[IncomingMessage], Awaitable[None]] | None = None,
) -> AsyncIterator[ClientSession]:
    """The official Python client, connected to ``url``'s ``/mcp`` with ``token``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        await session.initialize()
        yield session


async def ts_client(url: str, token: str | None, *args: str) -> dict[str, Any]:
    """One run of the official TypeScript client (``ts_client.mjs``, its default timeouts):
    ``list``, or ``call TOOL ARGS_JSON``; what it printed, as JSON."""
    process = await asyncio.create_subprocess_exec(
        node(),
        str(TS_CLIENT),
        f"{url}/mcp",
        token or "",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    answer: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return answer


def text_of(result: Any) -> str:
    """The text blocks of a ``CallToolResult`` (Python client), joined."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def _text_input(value: str) -> dict[str, str]:
    return {"type": "plain_text_input", "value": value}
