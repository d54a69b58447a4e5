"""The gateway's overhead (SPEC 17), against the real thing: ``python -m bot gateway`` in its own
process, in front of an upstream MCP server in another (``bench._mcp_upstream``, Streamable
HTTP), and the official Python ``mcp`` client in this one. (bench never imports ``bot``.)

- Not held: the same read-only call, with the same client and one session each, sent to the
  upstream server directly and through the gateway, interleaved in the same run;
  ``direct_median_ms``, ``gateway_median_ms``, their ``ratio`` and ``added_ms`` (the goal:
  a ratio under 1.3, or under 2 ms added).
- Held, decided at once: a call the gateway holds, whose card this process approves the moment
  it is posted (a signed click, as Slack sends it); ``held_median_ms`` from the client's call to
  the server's result (card posted, clicked, claimed, run, and the waiting request woken).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench._clicks import SECRET, _click_body, _free_port, _signed, _wait_healthy
from bench._fake_slack import FakeSlack, Message

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-person-token"
"""The person's token (``API_TOKENS``) the client sends."""
CHANNEL = "CGATE"


@contextlib.asynccontextmanager
async def _process(args: list[str], env: dict[str, str], url: str) -> AsyncIterator[None]:
    """``python <args>`` serving ``url``/healthz until left."""
    with tempfile.TemporaryFile() as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, *args, env=env, stdout=log, stderr=log, cwd=ROOT
        )
        try:
            await _wait_healthy(process, url, log)
            yield
        finally:
            if process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 30)
                except TimeoutError:
                    process.kill()
                    await process.wait()


@contextlib.asynccontextmanager
async def _gateway(slack: FakeSlack, upstream: str, folder: Path) -> AsyncIterator[str]:
    """``python -m bot gateway`` in front of ``upstream``; yields its base URL."""
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    (folder / "tokens.toml").write_text(f'[[tokens]]\nuser = "UREQ"\nsha256 = "{digest}"\n')
    (folder / "countersign.toml").write_text(f'[[mcp_servers]]\nname = "up"\nurl = "{upstream}"\n')
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        ),
        "SLACK_BOT_TOKEN": "xoxb-bench",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "BOT_AGENT": "bench._click_agent:AGENT",
        "GATEWAY_CHANNEL": CHANNEL,
        "API_TOKENS": str(folder / "tokens.toml"),
        "POLICY_FILE": str(folder / "countersign.toml"),
        "STORAGE_URL": f"sqlite+aiosqlite:///{folder / 'gateway.db'}",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "LOG_LEVEL": "ERROR",
    }
    for name in ("SLACK_APP_TOKEN", "REDIS_URL", "API_TOKEN", "APPROVERS", "GATEWAY"):
        env.pop(name, None)
    url = f"http://127.0.0.1:{port}"
    async with _process(["-m", "bot", "gateway"], env, url):
        yield url


@contextlib.asynccontextmanager
async def _session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=120.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _timed(session: ClientSession, tool: str, args: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await session.call_tool(tool, args)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return elapsed


async def _approve_each_card(slack: FakeSlack, gateway: str, seen: set[str]) -> None:
    """Click Approve on every new card the moment it is posted (as a person: not UREQ)."""
    async with aiohttp.ClientSession() as http:
        while True:
            await slack.wait_until(lambda: any(c.ts not in seen for c in slack.cards()))
            for card in [c for c in slack.cards() if c.ts not in seen]:
                seen.add(card.ts)
                await _click(http, gateway, card)


async def _click(http: aiohttp.ClientSession, gateway: str, card: Message) -> None:
    body = _click_body(card, "UAPPROVER", f"{gateway}/unused")
    headers = _signed(body, "application/x-www-form-urlencoded")
    async with http.post(f"{gateway}/slack/events", data=body, headers=headers) as response:
        await response.read()


async def run_gateway(calls: int = 200, held: int = 20, warmup: int = 10) -> dict[str, Any]:
    """The figure (see the module docstring)."""
    port = _free_port()
    upstream = f"http://127.0.0.1:{port}/mcp"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        async with (
            _process(["-m", "bench._mcp_upstream", str(port)], env, f"http://127.0.0.1:{port}"),
            FakeSlack() as slack,
            _gateway(slack, upstream, Path(folder)) as gateway,
            _session(upstream) as direct,
            _session(f"{gateway}/mcp", TOKEN) as through,
        ):
            for n in range(warmup):
                await _timed(direct, "read", {"key": f"w{n}"})
                await _timed(through, "up_read", {"key": f"w{n}"})
            direct_ms, gateway_ms = [], []
            for n in range(calls):  # interleaved: both see the same machine
                direct_ms.append(await _timed(direct, "read", {"key": f"k{n}"}))
                gateway_ms.append(await _timed(through, "up_read", {"key": f"k{n}"}))
            approver = asyncio.create_task(_approve_each_card(slack, gateway, set()))
            try:
                held_ms = [
                    await _timed(through, "up_write", {"key": f"h{n}", "value": "v"})
                    for n in range(held)
                ]
            finally:
                approver.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await approver
    direct_median = statistics.median(direct_ms)
    gateway_median = statistics.median(gateway_ms)
    return {
        "figure": "gateway",
        "calls": calls,
        "direct_median_ms": round(direct_median, 3),
        "gateway_median_ms": round(gateway_median, 3),
        "ratio": round(gateway_median / direct_median, 2),
        "added_ms": round(gateway_median - direct_median, 3),
        "held_calls": held,
        "held_median_ms": round(statistics.median(held_ms), 3),
        "held_max_ms": round(max(held_ms), 3),
        "cards": len(slack.cards()),
    }


if __name__ == "__main__":  # python -m bench._gateway: this figure alone
    print(json.dumps(asyncio.run(run_gateway())))
