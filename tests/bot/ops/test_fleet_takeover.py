"""Two ``python -m bot`` processes on one PostgreSQL and one Redis (SPEC 3.4, a takeover is
final): the instance running an approved tool is SIGSTOPped past its lease, the other takes the
call over and posts its outcome (retried when idempotent, else interrupted), then the paused one
is SIGCONTed, finishes its tool and drains. The thread shows exactly one outcome for the call.
Skipped unless ``TEST_POSTGRES_URL`` and ``TEST_REDIS_URL`` are set."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from pathlib import Path

import aiohttp
import pytest

from tests.backends import POSTGRES_ENV, REDIS_ENV, _drop_redis_prefix, open_storage, unique_url
from tests.bot.harness import CHANNEL, SECRET, click_payload
from tests.bot.ops.test_fleet import ROOT, _eventually, _fleet, _mention
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import interaction_request

pytestmark = [
    pytest.mark.processes,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (os.environ.get(POSTGRES_ENV) and os.environ.get(REDIS_ENV)),
        reason=f"set {POSTGRES_ENV} and {REDIS_ENV} (.ci/run does)",
    ),
]
LEASE_SECONDS = 2


@pytest.mark.parametrize(
    ("idempotent", "outcome"),
    [("1", "Deleted r1."), ("0", "Not done: interrupted.")],
    ids=["idempotent", "plain"],
)
async def test_a_paused_instance_that_wakes_up_adds_nothing_to_the_thread(
    slack: FakeSlackAPI, tmp_path: Path, idempotent: str, outcome: str
) -> None:
    gate, executions = tmp_path / "gate", tmp_path / "executions.log"
    gate.mkdir()
    executions.touch()
    (gate / "hold-r1").touch()
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    base_redis = os.environ[REDIS_ENV]
    redis_url = f"{base_redis}{'&' if '?' in base_redis else '?'}key_prefix={prefix}"
    async with unique_url("postgres", tmp_path) as storage_url:
        async with open_storage(storage_url) as store:
            await store.get_value("warm-up")  # migrate once, before two processes race to
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.base_url,
            "STORAGE_URL": storage_url,
            "REDIS_URL": redis_url,
            "BOT_AGENT": "tests.bot.ops.fleet_agent:agent",
            "FLEET_IDEMPOTENT": idempotent,
            "GATE_DIR": str(gate),
            "EXECUTIONS_FILE": str(executions),
            "CLAIM_LEASE_SECONDS": str(LEASE_SECONDS),
            "PYTHONPATH": str(ROOT),
            "LOG_LEVEL": "WARNING",
            "HOST": "127.0.0.1",
        }
        for name in ("SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET", "APPROVERS"):
            env.pop(name, None)
        try:
            async with _fleet(env, 2) as fleet, aiohttp.ClientSession() as http:
                (a, proc_a), _ = fleet
                thread = f"{int(time.time())}.000001"

                async def post(request: tuple[str, dict[str, str]]) -> int:
                    async with http.post(
                        f"{a}/slack/events", data=request[0], headers=request[1]
                    ) as response:
                        return response.status

                def cards() -> list[PostedMessage]:
                    return [m for m in slack.thread(CHANNEL, thread) if m.blocks]

                def answers() -> list[str]:
                    return [m.text for m in slack.thread(CHANNEL, thread) if not m.blocks]

                assert await post(_mention(thread, "r1")) == 200
                await _eventually(lambda: len(cards()) == 1, "the card")
                click = click_payload(cards()[0], "approval:approve", user="U2")
                assert await post(interaction_request(click, SECRET)) == 200
                await _eventually(lambda: (gate / "started-r1").exists(), "r1's tool on A")
                (gate / "hold-r1").unlink()  # a retry on B runs straight through

                proc_a.send_signal(signal.SIGSTOP)  # paused mid-tool, past its lease
                try:
                    await _eventually(lambda: answers() == [outcome], "B's outcome", 120)
                finally:
                    (gate / "release-r1").touch()
                    proc_a.send_signal(signal.SIGCONT)  # A finishes its tool after all ...
                proc_a.send_signal(signal.SIGTERM)  # ... and drains: its work is over
                assert await asyncio.wait_for(proc_a.wait(), 40) == 0

                assert answers() == [outcome]  # one outcome in the thread, B's
                await _eventually(  # the card's own update may land after the answer
                    lambda: ("Interrupted" in str(cards()[0].blocks)) == (idempotent == "0"),
                    "the card's outcome",
                    30,
                )
                [card] = cards()
                assert not any(b["type"] == "actions" for b in card.blocks)
                interrupted = "Interrupted" in str(card.blocks)
                assert interrupted == (idempotent == "0"), card.blocks
                ran = (await asyncio.to_thread(executions.read_text)).split()
                assert ran == (["r1", "r1"] if idempotent == "1" else ["r1"])
        finally:
            await _drop_redis_prefix(base_redis, prefix)
