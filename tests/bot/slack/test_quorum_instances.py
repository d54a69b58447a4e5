"""Quorum across two ``python -m bot`` processes: two users click Approve on different
instances at the same time → both approvals recorded, the tool runs once. Skipped unless
``TEST_POSTGRES_URL`` and ``TEST_REDIS_URL`` are set (``.ci/run``)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import aiohttp
import pytest

from tests.backends import POSTGRES_ENV, REDIS_ENV, _drop_redis_prefix, open_storage, unique_url
from tests.bot.harness import CHANNEL, SECRET, TEAM, click_payload
from tests.bot.slack.test_many_instances import _eventually, _instances, _post_all
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tests.fakes.slack_signing import event_request, interaction_request

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(
        not (os.environ.get(POSTGRES_ENV) and os.environ.get(REDIS_ENV)),
        reason=f"set {POSTGRES_ENV} and {REDIS_ENV} (.ci/run does)",
    ),
]


async def test_two_users_approving_at_once_on_two_instances_run_the_tool_once(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    executions = tmp_path / "executions.log"
    executions.touch()
    policy = tmp_path / "countersign.toml"
    policy.write_text('[[rules]]\ntools = ["delete*"]\napprovals = 2\n', encoding="utf-8")
    prefix = f"test-{uuid.uuid4().hex[:12]}:"
    base_redis = os.environ[REDIS_ENV]
    redis_url = f"{base_redis}{'&' if '?' in base_redis else '?'}key_prefix={prefix}"
    async with unique_url("postgres", tmp_path) as storage_url:
        async with open_storage(storage_url) as store:
            await store.get_value("warm-up")
        try:
            async with (
                _instances(
                    slack,
                    storage_url,
                    redis_url,
                    executions,
                    extra_env={"POLICY_FILE": str(policy)},
                ) as urls,
                aiohttp.ClientSession() as http,
            ):
                ts = f"{int(time.time())}.000200"
                event = {
                    "type": "app_mention",
                    "user": "U1",
                    "text": "<@UBOT> delete record abc-123",
                    "ts": ts,
                    "channel": CHANNEL,
                    "team": TEAM,
                    "event_ts": ts,
                }
                envelope = {
                    "type": "event_callback",
                    "team_id": TEAM,
                    "event_id": "EvQuorum1",
                    "event": event,
                }
                assert await _post_all(http, [(urls[0], *event_request(envelope, SECRET))]) == [200]

                def cards() -> list[PostedMessage]:
                    return [m for m in slack.thread(CHANNEL, ts) if m.blocks]

                await _eventually(lambda: len(cards()) >= 1, "the approval card")
                [card] = cards()
                clicks = [
                    interaction_request(
                        click_payload(card, "approval:approve", user=user, response_url=f"{url}/x"),
                        SECRET,
                    )
                    for user, url in (("U2", urls[0]), ("U3", urls[1]))
                ]
                statuses = await _post_all(http, [(urls[0], *clicks[0]), (urls[1], *clicks[1])])
                assert statuses == [200, 200]

                def answers() -> list[str]:
                    return [m.text for m in slack.thread(CHANNEL, ts) if not m.blocks]

                await _eventually(lambda: answers() == ["Deleted."], "the answer")
                await asyncio.sleep(0.5)  # a second run would show by now
                lines = (await asyncio.to_thread(executions.read_text)).splitlines()
                assert len(lines) == 1
                assert answers() == ["Deleted."]
        finally:
            await _drop_redis_prefix(base_redis, prefix)
