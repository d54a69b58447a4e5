"""The local workspace plays an app with Slack's agent messaging experience (SPEC 10, 16): the
app's Messages tab gets the prompts the bot pinned at its top, each message written there starts
a conversation, a restart of ``python -m bot`` mid-conversation keeps every conversation where
it was (never in ``#ops``) with its answers and status, and a storage outage is told in the
conversation as Slack would tell it."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot import APPROVE_ACTION
from bot.local._workspace import CHANNEL_ID, dm_of
from tests.bot.bot_process import BotProcess, serve_bot_process
from tests.bot.local.fixtures import ALEX, SAM, local_workspace, texts
from tests.own_servers import OwnRedis

pytestmark = [pytest.mark.slow, pytest.mark.processes]

DM = dm_of(ALEX)


async def test_the_messages_tab_pins_prompts_and_each_message_starts_a_conversation() -> None:
    async with local_workspace() as local:
        await local.post("/_local/assistant/open", {"user": ALEX})
        tab = (await local.state())["assistant"]
        assert tab["channel"] == DM
        assert [p["title"] for p in tab["prompts"]] == ["What can you do?"]

        first = await local.say_in(DM, "list records")
        second = await local.say_in(DM, "delete record 42")
        tab = (await local.state())["assistant"]
        assert [t["thread_ts"] for t in tab["threads"]] == [first, second]
        one, two = tab["threads"]
        assert one["root"]["text"] == "list records"
        assert "Acme Corp" in texts(one["messages"])  # answered in its own thread
        assert [b["type"] for b in two["messages"][0]["blocks"]] == ["task_card"]
        assert two["status"] == "is waiting for an approver to approve Delete a record…"
        assert all(m["channel"] != CHANNEL_ID for m in two["messages"])
        assert [m for m in (await local.state())["messages"] if m["ts"] in (first, second)] == []


@pytest_asyncio.fixture
async def bot_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_"))}
    env.pop("BOT_AGENT", None)
    env.update(STORAGE_URL=f"sqlite+aiosqlite:///{tmp_path / 'local.db'}", HOST="127.0.0.1")
    return env


async def _post(bot: BotProcess, path: str, body: dict[str, Any]) -> dict[str, Any]:
    async with bot.http.post(f"{bot.url}{path}", json=body) as response:
        assert response.status == 200, await response.text()
        answer: dict[str, Any] = await response.json()
        return answer


async def _state(bot: BotProcess, user: str = ALEX) -> dict[str, Any]:
    async with bot.http.get(f"{bot.url}/_local/state", params={"user": user}) as response:
        state: dict[str, Any] = await response.json()
        return state


async def _until(bot: BotProcess, check: Any, user: str = ALEX) -> dict[str, Any]:
    """The state once ``check(state)`` holds (the bot answers in the background)."""
    for _ in range(400):
        state = await _state(bot, user)
        if check(state):
            return state
        async with bot.http.get(
            f"{bot.url}/_local/state", params={"user": user, "since": str(state["version"])}
        ):
            pass  # a long poll: answers at the next change
    pytest.fail("the local workspace never reached the state the test waits for")


def _conversation(state: dict[str, Any], ts: str) -> dict[str, Any]:
    [thread] = [t for t in state["assistant"]["threads"] if t["thread_ts"] == ts]
    return dict(thread)


async def test_a_restart_mid_conversation_keeps_it_in_the_messages_tab_with_its_answers(
    bot_env: dict[str, str], tmp_path: Path
) -> None:
    async with serve_bot_process(bot_env, tmp_path) as before:
        await _post(before, "/_local/assistant/open", {"user": ALEX})
        asked = await _post(
            before, "/_local/messages", {"user": ALEX, "text": "list records", "channel": DM}
        )
        listed = await _until(
            before, lambda s: "Acme Corp" in texts(_conversation(s, asked["ts"])["messages"])
        )
        waiting = await _post(
            before, "/_local/messages", {"user": ALEX, "text": "delete record 42", "channel": DM}
        )
        shown = await _until(
            before, lambda s: "Approve" in texts(_conversation(s, waiting["ts"])["messages"])
        )
        kept = shown["assistant"]
    assert before.returncode == 0

    async with serve_bot_process(bot_env, tmp_path) as after:  # the same storage
        state = await _state(after)
        assert state["assistant"]["threads"] == kept["threads"]  # where it was, answers too
        assert state["assistant"]["prompts"] == kept["prompts"]
        assert (
            _conversation(state, asked["ts"])["messages"]
            == _conversation(listed, asked["ts"])["messages"]
        )
        ops = [m["ts"] for m in state["messages"]]
        assert asked["ts"] not in ops and waiting["ts"] not in ops  # never moved into #ops
        await _post(after, "/_local/home", {"user": SAM})
        home = await _until(after, lambda s: s["home"] is not None, user=SAM)
        block = next(
            b
            for b in home["home"]["blocks"]
            for e in b.get("elements") or []
            if e.get("action_id") == APPROVE_ACTION
        )
        await _post(
            after,
            "/_local/home/actions",
            {"user": SAM, "block_id": block["block_id"], "action_id": APPROVE_ACTION},
        )
        done = await _until(
            after,
            lambda s: (
                "was deleted" in texts(_conversation(s, waiting["ts"])["messages"])
                and _conversation(s, waiting["ts"])["status"] == ""
            ),  # cleared once it answered
        )
        conversation = _conversation(done, waiting["ts"])
        assert conversation["status"] == ""
        assert "Approved by" in texts(conversation["messages"])


@pytest_asyncio.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = OwnRedis(tmp_path)
    await redis.start()
    try:
        yield redis
    finally:
        redis.stop()


async def test_with_storage_down_the_conversation_says_so_as_slack_would(
    own_redis: OwnRedis,
) -> None:
    async with local_workspace(STORAGE_URL=own_redis.url) as local:
        own_redis.stop()
        ts = await local.say_in(DM, "list records", delivered=503)
        tab = (await local.state())["assistant"]
        [note] = _conversation({"assistant": tab}, ts)["messages"]
        assert "database could not be reached" in note["text"]
        assert "STORAGE_URL" in note["text"]
