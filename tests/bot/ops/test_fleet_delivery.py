"""Two ``python -m bot`` processes, on PostgreSQL and on Redis storage, one Redis for locks
(issue 33): what people SEE after a takeover.

- An instance SIGSTOPped while the model answers (past its lease): the other takes the answer
  over and posts it; the paused one, woken, posts nothing: the thread holds ONE answer.
- An instance killed or frozen as the idempotent tool starts (before it could update the card):
  the other runs the tool again, posts the result and brings the card to "Approved" with who
  approved it, no buttons left.

Skipped unless ``TEST_POSTGRES_URL`` and ``TEST_REDIS_URL`` are set (``.ci/run`` sets them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.backends import POSTGRES_ENV, REDIS_ENV, _drop_redis_prefix, open_storage, unique_url
from tests.bot.harness import CHANNEL, SECRET, click_payload
from tests.bot.ops.test_fleet import ROOT, _eventually, _fleet, _mention
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import interaction_request

pytestmark = [
    pytest.mark.slow,
    pytest.mark.processes,
    pytest.mark.skipif(
        not (os.environ.get(POSTGRES_ENV) and os.environ.get(REDIS_ENV)),
        reason=f"set {POSTGRES_ENV} and {REDIS_ENV} (.ci/run does)",
    ),
]
LEASE_SECONDS = 2


@contextlib.asynccontextmanager
async def _two_bots(
    slack: FakeSlackAPI, tmp_path: Path, backend: str, **extra: str
) -> AsyncIterator[tuple[list[tuple[str, Any]], Path, Path]]:
    gate, executions = tmp_path / "gate", tmp_path / "executions.log"
    gate.mkdir()
    executions.touch()
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    base_redis = os.environ[REDIS_ENV]
    redis_url = f"{base_redis}{'&' if '?' in base_redis else '?'}key_prefix={prefix}"
    async with unique_url(backend, tmp_path) as storage_url:
        async with open_storage(storage_url) as store:
            await store.get_value("warm-up")  # migrate once, before two processes race to
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.base_url,
            "STORAGE_URL": storage_url,
            "REDIS_URL": redis_url,
            "BOT_AGENT": "tests.bot.ops.delivery_agent:agent",
            "GATE_DIR": str(gate),
            "EXECUTIONS_FILE": str(executions),
            "CLAIM_LEASE_SECONDS": str(LEASE_SECONDS),
            "PYTHONPATH": str(ROOT),
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
            **extra,
        }
        for name in ("SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "APPROVERS"):
            env.pop(name, None)
        try:
            async with _fleet(env, 2) as fleet:
                yield fleet, gate, executions
        finally:
            await _drop_redis_prefix(base_redis, prefix)


async def _post(http: aiohttp.ClientSession, base: str, request: tuple[str, dict[str, str]]) -> int:
    async with http.post(f"{base}/slack/events", data=request[0], headers=request[1]) as response:
        return response.status


def _cards(slack: FakeSlackAPI, thread: str) -> list[PostedMessage]:
    return [m for m in slack.thread(CHANNEL, thread) if m.blocks]


def _answers(slack: FakeSlackAPI, thread: str) -> list[str]:
    return [m.text for m in slack.thread(CHANNEL, thread) if not m.blocks]


@pytest.mark.parametrize("backend", ["postgres", "redis"])
async def test_an_instance_frozen_while_the_model_answers_never_posts_a_second_answer(
    slack: FakeSlackAPI, tmp_path: Path, backend: str
) -> None:
    async with (
        _two_bots(slack, tmp_path, backend) as (fleet, gate, _),
        aiohttp.ClientSession() as http,
    ):
        (a, proc_a), _ = fleet
        thread = f"{int(time.time())}.000001"
        (gate / "hold-answer").touch()
        assert await _post(http, a, _mention(thread, "r1")) == 200
        await _eventually(lambda: len(_cards(slack, thread)) == 1, "the card")
        click = click_payload(_cards(slack, thread)[0], "approval:approve", user="U2")
        assert await _post(http, a, interaction_request(click, SECRET)) == 200
        await _eventually(lambda: (gate / f"answering-{proc_a.pid}").exists(), "A answering")

        proc_a.send_signal(signal.SIGSTOP)  # frozen while the model answers, past its lease
        (gate / "hold-answer").unlink()  # the other instance's model answers at once
        try:
            await _eventually(lambda: _answers(slack, thread) == ["Deleted r1."], "B's answer")
        finally:
            (gate / "release-answer").touch()
            proc_a.send_signal(signal.SIGCONT)  # A's model answers after all ...
        await asyncio.sleep(3 * LEASE_SECONDS)  # ... and anything A still sends shows now
        proc_a.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc_a.wait(), 40) == 0
        assert _answers(slack, thread) == ["Deleted r1."]  # one answer: B's
        [card] = _cards(slack, thread)
        assert not any(b["type"] == "actions" for b in card.blocks)


@pytest.mark.parametrize("fault", ["kill", "freeze"])
@pytest.mark.parametrize("backend", ["postgres", "redis"])
async def test_kill_or_freeze_at_the_idempotent_tools_start_the_card_shows_the_outcome(
    slack: FakeSlackAPI, tmp_path: Path, backend: str, fault: str
) -> None:
    async with (
        _two_bots(slack, tmp_path, backend, FLEET_IDEMPOTENT="1") as (fleet, gate, executions),
        aiohttp.ClientSession() as http,
    ):
        (a, proc_a), _ = fleet
        thread = f"{int(time.time())}.000002"
        (gate / "hold-r1").touch()
        assert await _post(http, a, _mention(thread, "r1")) == 200
        await _eventually(lambda: len(_cards(slack, thread)) == 1, "the card")
        struck: list[str] = []

        async def strike(args: dict[str, Any]) -> None:
            """A's first card update: A stops right there, its tool started."""
            if struck:
                return
            struck.append(fault)
            for _ in range(200):
                if list(gate.glob(f"started-r1-{proc_a.pid}")):
                    break
                await asyncio.sleep(0.025)
            proc_a.send_signal(signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
            (gate / "hold-r1").unlink()  # the other instance's retry runs straight through
            raise RuntimeError("the card update never reached Slack")

        slack.on("chat.update", strike)
        click = click_payload(_cards(slack, thread)[0], "approval:approve", user="U2")
        assert await _post(http, a, interaction_request(click, SECRET)) == 200
        try:
            await _eventually(lambda: _answers(slack, thread) == ["Deleted r1."], "B's result")
            await _eventually(
                lambda: not any(b["type"] == "actions" for b in _cards(slack, thread)[0].blocks),
                "the card's outcome",
                30,
            )
        finally:
            (gate / "release-r1").touch()
            if fault == "freeze":
                proc_a.send_signal(signal.SIGCONT)
        if fault == "freeze":
            await asyncio.sleep(3 * LEASE_SECONDS)  # A finishes its tool: it tells nothing
        [card] = _cards(slack, thread)
        assert card.blocks[0]["text"]["text"] == "✅ Approved: Delete a record"
        assert "Approved by <@U2>" in str(card.blocks)
        assert _answers(slack, thread) == ["Deleted r1."]
        assert len((await asyncio.to_thread(executions.read_text)).split("\n")) >= 2  # B ran it


async def test_a_late_approved_update_that_lands_after_a_takeover_is_covered_again(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    """A's "approved" card update passed its fence, then A froze before Slack had it; B took
    the call over (interrupted: not idempotent) and showed it; A's update lands last. A, woken,
    puts the takeover's card back (its fence refuses its own writes, not that one)."""
    async with (
        _two_bots(slack, tmp_path, "postgres") as (fleet, gate, _),
        aiohttp.ClientSession() as http,
    ):
        (a, proc_a), _ = fleet
        thread = f"{int(time.time())}.000003"
        (gate / "hold-r1").touch()
        assert await _post(http, a, _mention(thread, "r1")) == 200
        await _eventually(lambda: len(_cards(slack, thread)) == 1, "the card")
        held: list[str] = []

        def header() -> str:
            return str(_cards(slack, thread)[0].blocks[0]["text"]["text"])

        async def late(args: dict[str, Any]) -> None:
            """A's "approved" reaches Slack only once B has shown the interrupted call."""
            if held or "✅ Approved" not in str(args.get("blocks")):
                return
            held.append("approved")
            proc_a.send_signal(signal.SIGSTOP)  # past its lease: B takes the call over
            await _eventually(lambda: _answers(slack, thread) == ["Not done: interrupted."], "B")
            await _eventually(lambda: header().startswith("⚠️ Interrupted"), "B's card")

        slack.on("chat.update", late)
        click = click_payload(_cards(slack, thread)[0], "approval:approve", user="U2")
        assert await _post(http, a, interaction_request(click, SECRET)) == 200
        try:
            await _eventually(lambda: bool(held), "A's approved update")
            await _eventually(lambda: header().startswith("✅ Approved"), "A's late update")
        finally:
            (gate / "release-r1").touch()
            proc_a.send_signal(signal.SIGCONT)
        await _eventually(lambda: header().startswith("⚠️ Interrupted"), "the takeover's card")
        proc_a.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc_a.wait(), 40) == 0
        assert header().startswith("⚠️ Interrupted")
        assert _answers(slack, thread) == ["Not done: interrupted."]
