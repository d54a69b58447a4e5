"""Click-to-ack time of approval cards under concurrent clicks, against the real bot.

The bot runs exactly as deployed: ``python -m bot`` in HTTP mode, in its own process, serving
``bench._click_agent:AGENT`` with signature checking on, talking to ``FakeSlack`` (this process)
through ``SLACK_API_URL``. (bench never imports ``bot``: the architecture test forbids it, and a
separate process keeps the clicking client off the server's event loop.)

1. ``cards`` people mention the bot ("delete rec-N"): ``cards`` runs suspend and post a card.
2. Each card gets ``per_card`` clicks on Approve from different people, all signed as Slack
   signs them, at most ``concurrency`` in flight; one card's clicks are fired together, so all
   but one lose the atomic claim.
3. Each click is timed from the POST to the HTTP response (Slack's 3-second ack).
4. Then, over the wire only: every click was answered (the card updated once for the winner, an
   ephemeral note for each loser) and each thread's one answer says ``execution 1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
from slack_sdk.signature import SignatureVerifier

from bench._fake_slack import FakeSlack, Message

SECRET = "bench-signing-secret"
ROOT = Path(__file__).resolve().parents[1]
CHANNEL = "C1"
APPROVE = "approval:approve"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _signed(body: str, content_type: str) -> dict[str, str]:
    ts = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
    if signature is None:
        raise RuntimeError("slack_sdk could not sign the request")
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
    }


@dataclass(frozen=True, kw_only=True)
class Served:
    """A ``python -m bot`` process serving, as ``serve_bot`` yields it."""

    url: str
    """Its base URL."""
    pid: int
    """Its process id (``cpu_seconds``, ``rss_bytes``)."""
    ready_cpu_s: float
    """CPU seconds (user + system) it had used when ``/healthz`` first answered."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident set size of process ``pid``, in bytes (Linux ``/proc``)."""
    with open(f"/proc/{pid}/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


@contextlib.asynccontextmanager
async def _bot(
    slack: FakeSlack, storage_url: str, extra: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """``python -m bot`` on a free port (``extra``: more environment, e.g. ``APPROVERS``);
    yields its base URL, stops it on exit."""
    async with serve_bot(slack, storage_url, extra) as served:
        yield served.url


@contextlib.asynccontextmanager
async def serve_bot(
    slack: FakeSlack, storage_url: str, extra: dict[str, str] | None = None
) -> AsyncIterator[Served]:
    """``python -m bot`` on a free port, as ``_bot`` starts it; yields it once ``/healthz``
    answers, with the CPU it took to get there; stops it on exit."""
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
        "STORAGE_URL": storage_url,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "LOG_LEVEL": "ERROR",
    }
    for name in ("SLACK_APP_TOKEN", "REDIS_URL", "API_TOKEN", "APPROVERS"):
        env.pop(name, None)
    env.update(extra or {})
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", env=env, stdout=log, stderr=log, cwd=ROOT
        )
        try:
            await _wait_healthy(process, url, log)
            ready = cpu_seconds(process.pid)
            yield Served(url=url, pid=process.pid, ready_cpu_s=ready)
        finally:
            if process.returncode is None:
                process.terminate()
                try:
                    await asyncio.wait_for(process.wait(), 30)
                except TimeoutError:
                    process.kill()
                    await process.wait()


async def _wait_healthy(process: asyncio.subprocess.Process, url: str, log: Any) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if process.returncode is not None:
                log.seek(0)
                tail = log.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"the bot exited with {process.returncode}: {tail}")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(f"{url}/healthz") as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.05)
    raise RuntimeError("the bot did not answer /healthz within 30 s")


async def _mention(http: aiohttp.ClientSession, url: str, n: int, epoch: int) -> None:
    ts = f"{epoch}.{n:06d}"  # fresh per run: a persistent store remembers delivered messages
    envelope = {
        "token": "legacy",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": f"EvBench{epoch}x{n:06d}",
        "event_time": int(time.time()),
        "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": True}],
        "event": {
            "type": "app_mention",
            "user": "UREQ",
            "text": f"<@UBOT> delete rec-{n}",
            "ts": ts,
            "channel": CHANNEL,
            "team": "T1",
            "event_ts": ts,
        },
    }
    body = json.dumps(envelope)
    async with http.post(
        f"{url}/slack/events", data=body, headers=_signed(body, "application/json")
    ) as response:
        if response.status != 200:
            raise RuntimeError(f"mention {n} answered {response.status}")


def _click_body(card: Message, user: str, response_url: str) -> str:
    actions = next(b for b in card.blocks if b["type"] == "actions")
    button = next(e for e in actions["elements"] if e["action_id"] == APPROVE)
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A1",
        "token": "legacy",
        "team": {"id": "T1", "domain": "bench"},
        "trigger_id": f"trigger-{user}",
        "container": {
            "type": "message",
            "message_ts": card.ts,
            "channel_id": card.channel,
            "is_ephemeral": False,
            "thread_ts": card.thread_ts,
        },
        "channel": {"id": card.channel, "name": "ops"},
        "message": {"type": "message", "ts": card.ts, "thread_ts": card.thread_ts},
        "response_url": response_url,
        "actions": [
            {
                "type": "button",
                "action_id": APPROVE,
                "block_id": actions.get("block_id"),
                "value": button["value"],
                "action_ts": str(time.time()),
            }
        ],
    }
    return "payload=" + quote(json.dumps(payload))


async def _click(
    http: aiohttp.ClientSession, url: str, body: str, slots: asyncio.Semaphore
) -> tuple[float, int]:
    async with slots:
        headers = _signed(body, "application/x-www-form-urlencoded")
        started = time.perf_counter()
        async with http.post(f"{url}/slack/events", data=body, headers=headers) as response:
            await response.read()
            return (time.perf_counter() - started) * 1000, response.status


def _percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def _ran_once(slack: FakeSlack, card: Message) -> bool:
    answers = slack.answers(card.thread_ts or card.ts)
    return (
        card.updates == 1
        and len(answers) == 1
        and answers[0].text.startswith("Deleted rec-")
        and answers[0].text.endswith("(execution 1).")
    )


async def run_clicks(
    storage_url: str = "memory://",
    *,
    cards: int = 50,
    per_card: int = 3,
    concurrency: int = 50,
    settle_s: float = 120.0,
) -> dict[str, Any]:
    """Serve the bot, prepare ``cards`` pending approvals, click each ``per_card`` times."""
    clicks = cards * per_card
    async with (
        FakeSlack() as slack,
        _bot(slack, storage_url) as url,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as http,
    ):
        epoch = int(time.time())
        await asyncio.gather(*(_mention(http, url, n, epoch) for n in range(cards)))
        async with asyncio.timeout(settle_s):
            await slack.wait_until(lambda: len(slack.cards()) >= cards)
        slots = asyncio.Semaphore(concurrency)
        response_url = f"{slack.base_url}response-url"
        bodies = [
            _click_body(card, f"UAPPROVER{k}", response_url)
            for card in slack.cards()
            for k in range(per_card)
        ]
        acks = await asyncio.gather(*(_click(http, url, body, slots) for body in bodies))

        def unanswered() -> tuple[int, int]:
            decided = sum(c.updates for c in slack.cards()) + len(slack.ephemerals)
            unfinished = sum(
                not any("(execution" in a.text for a in slack.answers(c.thread_ts or c.ts))
                for c in slack.cards()
            )
            return clicks - decided, unfinished

        try:
            async with asyncio.timeout(settle_s):
                await slack.wait_until(lambda: max(unanswered()) <= 0)
        except TimeoutError:
            clicks_left, threads_left = unanswered()
            raise RuntimeError(
                f"after {settle_s} s, {clicks_left} clicks had no visible outcome and "
                f"{threads_left} threads no answer"
            ) from None
        once = all(_ran_once(slack, card) for card in slack.cards())
        losers_told = len(slack.ephemerals)
    timings = sorted(ms for ms, _ in acks)
    return {
        "figure": "clicks",
        "storage": storage_url.split("://", 1)[0],
        "cards": cards,
        "clicks": clicks,
        "concurrency": concurrency,
        "p50_ms": round(statistics.median(timings), 3),
        "p99_ms": round(_percentile(timings, 0.99), 3),
        "max_ms": round(timings[-1], 3),
        "acked_200": sum(1 for _, status in acks if status == 200),
        "losers_told": losers_told,
        "each_card_ran_once": once and losers_told == clicks - cards,
    }
