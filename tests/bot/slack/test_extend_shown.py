"""An Extend is shown wherever the call shows, on every path (the card's button, the Home tab,
the HTTP API): the person who clicked is told until when (or why not) also for a call in no
Slack thread, the Home tabs listing it show the new expiry, the stored card record carries it,
and the reminder follows it (never early for the old expiry, once more for the new one).
The sweep is called directly with an injected clock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

from agents import PendingToolCall
from agents.models import call, reply
from bot.background._periodic import sweep
from bot.slack._ids import APPROVE_ACTION, EXTEND_ACTION
from storage import Storage
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import CHANNEL, Bot, Executions, make_agent, start_bot
from tests.bot.slack.test_home import FIRST, _buttons, _valid
from tests.fakes.slack_api import FakeSlackAPI

TTL = 3600
POLICY = f"""
[[rules]]
tools = ["delete-*"]
approvers = ["U9"]
ttl_seconds = {TTL}
max_ttl_seconds = {3 * TTL}
"""
EXTEND = "/api/agents/ops/extend-tool-call"


def _date(at: datetime | None) -> str:
    assert at is not None
    return f"<!date^{int(at.timestamp())}^"


@asynccontextmanager
async def _served(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path, most: int = 3
) -> AsyncIterator[Bot]:
    policy = tmp_path / "countersign.toml"
    policy.write_text(POLICY.replace(f"{3 * TTL}", f"{most * TTL}"), encoding="utf-8")
    script = [call("delete_record", {"id": "x"}), reply("Deleted.")]
    agent, _ = make_agent(script, executions)
    env = {
        "POLICY_FILE": str(policy),
        "API_TOKENS": tokens_file(tmp_path, {"u9-token": "U9"}),
    }
    async with start_bot(slack, agent, store, env=env) as bot:
        yield bot


async def _pending(bot: Bot) -> tuple[str, PendingToolCall]:
    [run] = (await bot.agent.list_suspended_runs()).runs
    [shown] = run.tool_calls
    assert shown.expires_at is not None and shown.suspended_at is not None
    return run.run_id, shown


async def _now(bot: Bot, run_id: str, shown: PendingToolCall) -> PendingToolCall:
    now = await bot.agent.pending_call(run_id=run_id, tool_call_id=shown.tool_call_id)
    assert now is not None and now.expires_at is not None
    return now


async def test_extend_from_home_on_a_call_in_no_slack_thread_is_told_there_until_when(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path, most=2) as bot:
        result = await bot.agent.generate("delete x", thread_id="api:ticket-7", requested_by="U1")
        assert result.finish_reason == "suspended"
        await bot.settle()
        run_id, shown = await _pending(bot)
        home = _valid(await bot.open_home("U9"))
        assert (FIRST, EXTEND_ACTION) in _buttons(home)  # Home offers Extend on it

        assert (await bot.click_home(FIRST, EXTEND_ACTION, user="U9")).status == 200
        await bot.settle()
        moved = await _now(bot, run_id, shown)
        assert moved.expires_at == shown.expires_at + timedelta(seconds=TTL)
        told = repr(_valid(slack.homes["U9"])["blocks"])
        assert "Extended `delete_record`" in told and _date(moved.expires_at) in told
        assert _date(shown.expires_at) not in told  # the listing shows the new expiry too
        assert (
            slack.calls_to("chat.postEphemeral") == [] and slack.calls_to("chat.postMessage") == []
        )

        await bot.click_home(FIRST, EXTEND_ACTION, user="U9")  # at the rule's maximum now
        await bot.settle()
        assert "cannot be extended" in repr(slack.homes["U9"]["blocks"])
        assert (await _now(bot, run_id, shown)).expires_at == moved.expires_at


async def test_extend_from_home_on_a_card_redraws_it_republishes_home_and_rewrites_its_record(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        run_id, shown = await _pending(bot)
        await bot.open_home("U9")
        await bot.click_home(FIRST, EXTEND_ACTION, user="U9")
        await bot.settle()
        moved = await _now(bot, run_id, shown)
        assert moved.expires_at != shown.expires_at
        [update] = bot.updates_of(card.ts)
        assert _date(moved.expires_at) in str(update["blocks"])
        [note] = slack.calls_to("chat.postEphemeral")
        assert note["user"] == "U9" and "Extended" in note["text"]
        home = repr(slack.homes["U9"]["blocks"])  # published again with the new expiry
        assert _date(moved.expires_at) in home and _date(shown.expires_at) not in home
        record = await store.get_card(run_id, shown.tool_call_id)
        assert record is not None and record.ts == card.ts
        assert record.shown["expires_at"] == moved.expires_at.isoformat()
        found = await bot.services.cards.find(run_id, shown.tool_call_id)
        assert found is not None and found.view.expires_at == moved.expires_at


async def test_extend_over_http_rewrites_the_card_record_and_the_home_tabs_listing_it(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path) as bot:
        await bot.mention("delete x", user="U1")
        await bot.settle()
        run_id, shown = await _pending(bot)
        await bot.open_home("U9")
        ids = {"runId": run_id, "toolCallId": shown.tool_call_id}
        answer = await bot.http.post(EXTEND, json=ids, headers={"Authorization": "Bearer u9-token"})
        assert answer.status == 200, await answer.text()
        await bot.settle()
        moved = await _now(bot, run_id, shown)
        record = await store.get_card(run_id, shown.tool_call_id)
        assert record is not None and record.shown["expires_at"] == moved.expires_at.isoformat()
        home = repr(slack.homes["U9"]["blocks"])
        assert _date(moved.expires_at) in home and _date(shown.expires_at) not in home


async def test_a_reminder_sent_before_an_extend_says_so_and_the_next_comes_before_the_new_expiry(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        run_id, shown = await _pending(bot)
        assert shown.suspended_at is not None and shown.expires_at is not None
        start, end = shown.suspended_at, shown.expires_at
        await sweep(bot.services, now=start + timedelta(seconds=TTL * 0.85))
        [first] = [m for m in slack.thread(CHANNEL, ts) if not m.blocks]
        assert "still waiting" in first.text and _date(end) in first.text

        await bot.click(card, EXTEND_ACTION, user="U9")
        await bot.settle()
        new_end = (await _now(bot, run_id, shown)).expires_at
        assert new_end == end + timedelta(seconds=TTL)
        updated = slack.messages[first.ts].text  # its time no longer holds
        assert (
            "extended" in updated and _date(new_end) in updated and "still waiting" not in updated
        )

        assert (await sweep(bot.services, now=end)).expired == 0  # the old expiry: nothing
        await sweep(bot.services, now=new_end - timedelta(seconds=TTL * 0.25))
        assert len([m for m in slack.thread(CHANNEL, ts) if not m.blocks]) == 1  # not yet
        await sweep(bot.services, now=new_end - timedelta(seconds=TTL * 0.2))
        first_again, second = [m for m in slack.thread(CHANNEL, ts) if not m.blocks]
        assert first_again.ts == first.ts
        assert "still waiting" in second.text and _date(new_end) in second.text
        await sweep(bot.services, now=new_end - timedelta(seconds=TTL * 0.1))
        assert len([m for m in slack.thread(CHANNEL, ts) if not m.blocks]) == 2  # once

        await bot.click(card, APPROVE_ACTION, user="U9")
        await bot.settle()
        assert "approved by <@U9>" in slack.messages[second.ts].text


async def test_an_extend_before_the_reminder_moves_it_to_before_the_new_expiry(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        run_id, shown = await _pending(bot)
        assert shown.suspended_at is not None and shown.expires_at is not None
        start, end = shown.suspended_at, shown.expires_at
        await sweep(bot.services, now=start + timedelta(seconds=TTL * 0.5))
        await bot.click(card, EXTEND_ACTION, user="U9")
        await bot.settle()
        new_end = (await _now(bot, run_id, shown)).expires_at
        assert new_end is not None
        for at in (
            start + timedelta(seconds=TTL * 0.85),
            end,
            new_end - timedelta(seconds=TTL * 0.3),
        ):
            assert (await sweep(bot.services, now=at)).expired == 0
        assert [m for m in slack.thread(CHANNEL, ts) if not m.blocks] == []  # not early
        reminded = await sweep(bot.services, now=new_end - timedelta(seconds=TTL * 0.2))
        [reminder] = [m for m in slack.thread(CHANNEL, ts) if not m.blocks]
        assert "still waiting" in reminder.text and _date(new_end) in reminder.text
        assert reminded.next_due == new_end


async def test_extend_on_a_card_whose_record_was_lost_is_told_and_redrawn_not_dropped(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _served(slack, store, executions, tmp_path) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        run_id, shown = await _pending(bot)
        assert await store.delete_card(run_id, shown.tool_call_id)  # storage failed after the post
        await bot.click(card, EXTEND_ACTION, user="U9")
        await bot.settle()
        moved = await _now(bot, run_id, shown)
        assert moved.expires_at != shown.expires_at
        [note] = slack.calls_to("chat.postEphemeral")
        assert note["user"] == "U9" and "Extended" in note["text"]
        [update] = bot.updates_of(card.ts)
        assert _date(moved.expires_at) in str(update["blocks"])
        record = await store.get_card(run_id, shown.tool_call_id)
        assert record is not None and record.ts == card.ts
        assert record.shown["expires_at"] == moved.expires_at.isoformat()
