"""SPEC 16: assistant threads get a title and prompts; their runs show a status line that follows
the run through an approval, and stream their answers; channels keep the card as the status."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agents import Agent, Approve, Decline, GrantRequest
from agents.models import ScriptItem, call, reply
from bot import BotConfigError, load_settings
from bot.background import sweep
from bot.slack._ids import thread_id
from bot.slack.surfaces._status import refresh_statuses
from storage import Storage
from tests.bot.harness import TEAM, Bot, Executions, demo_tools, make_agent, next_ts, start_bot
from tests.fakes.slack_api import FakeSlackAPI

DM = "D1"


def assistant_started(thread_ts: str, *, user: str = "U1") -> dict[str, Any]:
    """The ``assistant_thread_started`` event Slack sends when a person opens the agent view."""
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "channel_id": DM,
            "thread_ts": thread_ts,
            "context": {"channel_id": "C1", "team_id": TEAM, "enterprise_id": None},
        },
        "event_ts": thread_ts,
    }


async def open_assistant_thread(bot: Bot) -> str:
    """A person opens a new assistant thread; returns its ``thread_ts``."""
    thread_ts = next_ts()
    response = await bot.send_event(assistant_started(thread_ts))
    assert response.status == 200, await response.text()
    await bot.settle()
    return thread_ts


async def ask(bot: Bot, thread_ts: str, text: str, *, user: str = "U1") -> None:
    """A person writes in the assistant thread (a ``message.im`` in the thread)."""
    await bot.message(text, user=user, channel=DM, thread_ts=thread_ts, channel_type="im")
    await bot.settle()


@asynccontextmanager
async def served(
    slack: FakeSlackAPI,
    store: Storage,
    script: list[ScriptItem],
    *,
    instructions: str = "",
    **env: str,
) -> AsyncIterator[Bot]:
    agent = Agent(
        id="ops",
        name="Ops",
        instructions=instructions,
        model=make_agent(script, Executions())[1],
        tools=demo_tools(Executions()),
    )
    slack.names.update({"U2": "sam", "U3": "robin"})  # users.info: the names statuses show
    async with start_bot(slack, agent, store, env=env) as bot:
        yield bot


def statuses(slack: FakeSlackAPI, thread_ts: str) -> list[str]:
    return [s for c, t, s in slack.surfaces.statuses if (c, t) == (DM, thread_ts)]


async def test_a_new_assistant_thread_gets_a_title_and_the_prompts_of_the_instructions(
    slack: FakeSlackAPI, store: Storage
) -> None:
    instructions = "You run ops.\nYou can:\n- list the records\n- open a ticket\n"
    async with served(slack, store, [], instructions=instructions) as bot:
        thread_ts = await open_assistant_thread(bot)
    assert slack.surfaces.titles[(DM, thread_ts)] == "Ops"
    prompts = slack.surfaces.prompts[(DM, thread_ts)]
    assert prompts == [
        {"title": "List the records", "message": "List the records"},
        {"title": "Open a ticket", "message": "Open a ticket"},
    ]


async def test_the_suggested_prompts_setting_wins_over_the_instructions(
    slack: FakeSlackAPI, store: Storage
) -> None:
    async with served(
        slack, store, [], instructions="- list", SUGGESTED_PROMPTS="Delete a record | Refund 5"
    ) as bot:
        thread_ts = await open_assistant_thread(bot)
    assert [p["message"] for p in slack.surfaces.prompts[(DM, thread_ts)]] == [
        "Delete a record",
        "Refund 5",
    ]


async def test_the_status_follows_the_run_through_an_approval_then_clears(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Deleted record a.")]
    async with served(slack, store, script, APPROVERS="U2") as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        waiting = "is waiting for @sam to approve delete-record…"
        assert statuses(slack, thread_ts) == ["is thinking…", waiting]
        assert slack.surfaces.status_of(DM, thread_ts) == waiting
        [card] = bot.cards(thread_ts, channel=DM)  # an ordinary message, never streamed
        assert card.ts not in {c["ts"] for c in slack.calls_to("chat.stopStream")}
        assert any(c.method == "chat.postMessage" and c["blocks"] for c in slack.calls)
        before = len(statuses(slack, thread_ts))
        assert (await bot.click(card, "approval:approve", user="U2")).status == 200
        await bot.settle()
        after = statuses(slack, thread_ts)[before:]
    assert waiting not in after  # the wait is over: never claimed again
    assert "is running delete-record…" in after
    assert after.index("is running delete-record…") < len(after) - 1
    assert after[-1] == ""  # cleared when the run answered
    [answer] = [m for m in slack.thread(DM, thread_ts) if "Deleted record a." in m.text]
    assert answer.ts not in slack.surfaces.streaming
    assert [b["status"] for b in answer.blocks if b["type"] == "task_card"] == ["complete"]


async def test_a_declined_call_is_never_said_to_run(slack: FakeSlackAPI, store: Storage) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Not deleted.")]
    async with served(slack, store, script) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        [card] = bot.cards(thread_ts, channel=DM)
        await bot.decline(card, user="U2", reason="no")
    shown = statuses(slack, thread_ts)
    assert not any(s.startswith("is running") for s in shown)
    assert shown[-1] == ""
    [answer] = [m for m in slack.thread(DM, thread_ts) if "Not deleted." in m.text]
    assert [b["status"] for b in answer.blocks if b["type"] == "task_card"] == ["error"]


async def test_the_answer_is_streamed_in_chunks_and_stopped(
    slack: FakeSlackAPI, store: Storage
) -> None:
    async with served(slack, store, [reply("Three records are there.")]) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "list")
    [start] = slack.calls_to("chat.startStream")
    assert start["thread_ts"] == thread_ts and start["channel"] == DM
    assert len(slack.calls_to("chat.appendStream")) >= 2  # as the model produced it
    [stop] = slack.calls_to("chat.stopStream")
    assert stop["ts"] == slack.thread(DM, thread_ts)[0].ts
    assert slack.calls_to("chat.postMessage") == []
    [answer] = slack.thread(DM, thread_ts)
    assert answer.text == "Three records are there."
    assert slack.surfaces.streaming == set()


async def test_in_a_channel_the_card_is_the_status_and_nothing_streams(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Deleted.")]
    async with served(slack, store, script) as bot:
        ts = await bot.mention("delete a")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
        assert bot.texts(ts) == ["Deleted."]
    assert slack.calls_to("assistant.threads.setStatus") == []
    assert slack.calls_to("chat.startStream") == []


def test_more_than_four_suggested_prompts_is_a_configuration_problem() -> None:
    with pytest.raises(BotConfigError, match="SUGGESTED_PROMPTS holds 5 prompts"):
        load_settings({"SUGGESTED_PROMPTS": "a | b | c | d | e"})
    assert load_settings({"SUGGESTED_PROMPTS": " a |b|| "}).suggested_prompts == ("a", "b")


async def test_a_context_change_is_acknowledged_and_changes_nothing(
    slack: FakeSlackAPI, store: Storage
) -> None:
    async with served(slack, store, []) as bot:
        thread_ts = await open_assistant_thread(bot)
        before = len(slack.calls)
        event = {**assistant_started(thread_ts), "type": "assistant_thread_context_changed"}
        assert (await bot.send_event(event)).status == 200
        await bot.settle()
        assert slack.calls[before:] == []


async def test_a_call_a_standing_grant_approves_is_said_to_run_without_a_wait(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        '[[rules]]\ntools = ["delete-*"]\napprovers = ["U2"]\n'
        "grants = { max_seconds = 3600, max_uses = 5 }\n",
        encoding="utf-8",
    )
    script = [call("delete_record", {"id": "a"}), reply("Deleted a.")] * 2
    async with served(slack, store, script, POLICY_FILE=str(policy)) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        [run] = (await bot.agent.list_suspended_runs()).runs
        grant = GrantRequest(seconds=600, max_uses=5)
        await bot.agent.decide(Approve(grant=grant), run_id=run.run_id, decided_by="U2")
        await bot.settle()
        before = len(statuses(slack, thread_ts))
        await ask(bot, thread_ts, "delete a again")
        after = statuses(slack, thread_ts)[before:]
    assert after == ["is thinking…", "is running delete-record…", "is thinking…", ""]


async def test_an_escalation_says_who_else_may_now_approve(
    slack: FakeSlackAPI, store: Storage, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        '[[rules]]\ntools = ["delete-*"]\napprovers = ["U2"]\nttl_seconds = 7200\n'
        'escalate = [{ after = "15m", approvers = ["U3"] }]\n',
        encoding="utf-8",
    )
    script = [call("delete_record", {"id": "a"}), reply("Deleted a.")]
    async with served(slack, store, script, POLICY_FILE=str(policy)) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        assert slack.surfaces.status_of(DM, thread_ts) == (
            "is waiting for @sam to approve delete-record…"
        )
        [run] = (await bot.agent.list_suspended_runs()).runs
        later = run.tool_calls[0].suspended_at + timedelta(minutes=16)
        assert (await sweep(bot.services, now=later)).escalated == 1
        await bot.settle()
        assert slack.surfaces.status_of(DM, thread_ts) == (
            "is waiting for @sam, @robin to approve delete-record…"
        )


async def test_a_waiting_status_is_set_again_before_slack_clears_it_until_the_call_is_decided(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Deleted record a.")]
    async with served(slack, store, script, APPROVERS="U2") as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        waiting = "is waiting for @sam to approve delete-record…"
        keeper, where = bot.services.statuses, thread_id(TEAM, DM, thread_ts)
        kept = keeper.kept(where)
        assert kept is not None and kept.status == waiting
        before = len(statuses(slack, thread_ts))
        assert await refresh_statuses(bot.services, now=kept.shown_at + 60) == 0  # not yet due
        assert await refresh_statuses(bot.services, now=kept.shown_at + 91) == 1  # before 120 s
        again = keeper.kept(where)
        assert again is not None and again.shown_at == kept.shown_at + 91
        assert await refresh_statuses(bot.services, now=again.shown_at + 91) == 1  # and again
        assert statuses(slack, thread_ts)[before:] == [waiting, waiting]
        [card] = bot.cards(thread_ts, channel=DM)
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
        assert keeper.kept(where) is None  # the decision moved the status on
        after = len(statuses(slack, thread_ts))
        assert await refresh_statuses(bot.services, now=again.shown_at + 1000) == 0
    assert len(statuses(slack, thread_ts)) == after
    assert slack.surfaces.status_of(DM, thread_ts) == ""  # cleared when the run answered


async def test_a_call_decided_elsewhere_is_no_longer_said_to_wait(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Not deleted.")]
    async with served(slack, store, script) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        where = thread_id(TEAM, DM, thread_ts)
        kept = bot.services.statuses.kept(where)
        assert kept is not None
        [run] = (await bot.agent.list_suspended_runs()).runs
        await bot.agent.decide(Decline(reason="no"), run_id=run.run_id, decided_by="U2")
        before = len(statuses(slack, thread_ts))  # decided as another instance would: no
        assert await refresh_statuses(bot.services, now=kept.shown_at + 91) == 0  # delivery here
        assert bot.services.statuses.kept(where) is None
        assert len(statuses(slack, thread_ts)) == before


async def test_the_task_card_of_the_message_that_asked_for_approval_completes(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"}), reply("Deleted record a.")]
    async with served(slack, store, script, APPROVERS="U2") as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
        cards = {c.ts for c in bot.cards(thread_ts, channel=DM)}
        [asked] = [m for m in slack.thread(DM, thread_ts) if m.ts not in cards]
        [task] = asked.blocks
        assert task["type"] == "task_card"
        assert task["status"] == "complete"  # never left "pending": the card took over
        assert task["title"] == "delete-record: sent for approval (card below)"
        assert asked.ts not in slack.surfaces.streaming


async def test_the_status_line_names_people_and_groups_looked_up_once(
    slack: FakeSlackAPI, store: Storage
) -> None:
    slack.usergroups["S0OPS"] = ["U3"]
    slack.names["S0OPS"] = "oncall"
    script = [call("delete_record", {"id": "a"}), call("delete_record", {"id": "b"})]
    async with served(slack, store, script, APPROVERS="U2,S0OPS") as bot:
        first = await open_assistant_thread(bot)
        await ask(bot, first, "delete a")
        second = await open_assistant_thread(bot)
        await ask(bot, second, "delete b")
    waiting = "is waiting for @sam, @oncall to approve delete-record…"  # plain text: names
    assert slack.surfaces.status_of(DM, first) == waiting
    assert slack.surfaces.status_of(DM, second) == waiting
    assert len(slack.calls_to("users.info")) == 1  # cached: not one call per status
    assert len(slack.calls_to("usergroups.list")) == 1


async def test_a_name_slack_will_not_give_is_left_out_of_the_status(
    slack: FakeSlackAPI, store: Storage
) -> None:
    script = [call("delete_record", {"id": "a"})]
    async with served(slack, store, script, APPROVERS="U2") as bot:
        slack.fail_next("users.info", error="missing_scope")
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete a")
    assert statuses(slack, thread_ts)[-1] == "is waiting for an approver to approve delete-record…"
