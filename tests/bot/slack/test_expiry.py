"""Expiry: a reminder before the TTL, then expired (the model is told so), card updated,
audited; a late click gets an ephemeral. The sweep is called directly with an injected clock."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import bot.slack._messages as msg
from agents.models import ScriptedModel, call, reply
from bot.background._periodic import (
    SWEEP_EVERY,
    Background,
    sweep,
    sweep_delay,
    sweep_expired,
)
from bot.slack._ids import APPROVE_ACTION, ASK_AGAIN_ACTION
from storage import Storage, utcnow
from tests.bot.harness import CHANNEL, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

TTL = 3600


def _buttons(blocks: list[dict[str, object]]) -> list[object]:
    return [
        e["action_id"]
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]  # type: ignore[attr-defined]
    ]


@asynccontextmanager
async def _pending(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> AsyncIterator[tuple[Bot, ScriptedModel, str, PostedMessage]]:
    script = [call("delete_record", {"id": "x"}), reply("The deletion expired; nothing changed.")]
    agent, model = make_agent(script, executions)
    env = {"APPROVAL_TTL_SECONDS": str(TTL)}
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        yield bot, model, ts, card


async def test_a_reminder_is_posted_once_before_expiry(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, ts, card):
        start = utcnow()
        assert await sweep_expired(bot.services, now=start + timedelta(seconds=TTL * 0.5)) == 0
        assert bot.texts(ts) == []
        for fraction in (0.85, 0.9):
            await sweep_expired(bot.services, now=start + timedelta(seconds=TTL * fraction))
        [reminder] = bot.texts(ts)
        assert "delete_record" in reminder and "expires <!date^" in reminder
        assert executions.of("delete_record") == [] and bot.updates_of(card.ts) == []


async def test_an_expired_approval_is_declined_the_card_updated_and_audited(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, model, ts, card):
        later = utcnow() + timedelta(seconds=TTL + 1)
        assert await sweep_expired(bot.services, now=later) == 1
        await bot.settle()
        assert executions.of("delete_record") == []
        [updated] = bot.cards(ts)
        assert "Expired" in json.dumps(updated.blocks)
        assert _buttons(updated.blocks) == [ASK_AGAIN_ACTION]  # no decision button
        tool_message = model.requests[-1].messages[-1]
        assert tool_message.role == "tool"
        content = (tool_message.content or "").lower()
        assert "expired" in content and "not executed" in content
        assert bot.texts(ts)[-1] == "The deletion expired; nothing changed."
        events = await store.query_audit()
        [decided] = [e for e in events if e.kind == "decided"]
        assert (decided.actor, decided.source) == ("system", "expiry")
        assert (decided.data["decision"], decided.data["reason"]) == ("expired", "expired")
        [expired] = [e for e in events if e.kind == "expired"]
        assert expired.data["message_ts"] == card.ts and expired.data["ttl_seconds"] == TTL
        assert await sweep_expired(bot.services, now=later + timedelta(seconds=60)) == 0


async def test_a_click_after_expiry_gets_an_ephemeral_and_runs_nothing(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, _ts, card):
        await sweep_expired(bot.services, now=utcnow() + timedelta(seconds=TTL + 1))
        await bot.settle()
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert (ephemeral["user"], ephemeral["text"]) == ("U2", msg.EXPIRED)
        assert len(bot.updates_of(card.ts)) == 1


async def test_a_call_decided_before_the_sweep_is_not_expired(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, _ts, card):
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert await sweep_expired(bot.services, now=utcnow() + timedelta(days=30)) == 0
        assert executions.of("delete_record") == [{"id": "x"}]


def test_the_sweep_pauses_at_most_five_seconds_and_less_when_something_is_due_sooner() -> None:
    now = utcnow()
    assert sweep_delay(None, now) == SWEEP_EVERY == 5.0
    assert sweep_delay(now + timedelta(days=1), now) == 5.0
    assert sweep_delay(now + timedelta(seconds=2), now) == 2.0
    assert 0 < sweep_delay(now - timedelta(seconds=1), now) < 1


async def test_the_background_sweeps_at_least_every_five_seconds_whatever_the_ttl(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent([], executions)
    async with start_bot(slack, agent, store, env={"APPROVAL_TTL_SECONDS": "86400"}) as bot:
        assert Background(bot.services).sweep_every == 5.0
        assert Background(bot.services, interval=600).sweep_every == 5.0


async def test_a_policy_ttl_is_reminded_at_80_percent_and_expired_when_due(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text('[[rules]]\ntools = ["delete-*"]\nttl_seconds = 60\n', encoding="utf-8")
    script = [call("delete_record", {"id": "x"}), reply("It expired.")]
    agent, _ = make_agent(script, executions)
    env = {"APPROVAL_TTL_SECONDS": "86400", "POLICY_FILE": str(policy)}
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.suspended_at is not None and pending.expires_at is not None
        start, end = pending.suspended_at, pending.expires_at
        early = await sweep(bot.services, now=start + timedelta(seconds=10))
        assert early.next_due == start + timedelta(seconds=30)  # its first look (a lost card)
        looked = await sweep(bot.services, now=start + timedelta(seconds=30))
        assert looked.next_due == start + timedelta(seconds=48)  # the reminder, at 80 %
        assert bot.texts(ts) == []
        reminded = await sweep(bot.services, now=start + timedelta(seconds=48))
        [reminder] = bot.texts(ts)
        assert "still waiting" in reminder and reminded.next_due == end
        assert (await sweep(bot.services, now=end)).expired == 1
        await bot.settle()
        assert bot.slack.messages[card.ts].blocks[0]["text"]["text"].startswith("⌛ Expired")


async def test_a_reminder_says_how_its_card_was_decided(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, ts, card):
        await sweep_expired(bot.services, now=utcnow() + timedelta(seconds=TTL * 0.85))
        [reminder] = [m for m in bot.slack.thread(CHANNEL, ts) if not m.blocks]
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        updated = bot.slack.messages[reminder.ts].text
        assert "still waiting" not in updated and "approved by <@U2>" in updated


async def _backdate(store: Storage, seconds: float) -> None:
    """Move every pending call of the stored runs ``seconds`` into the past (its TTL with it)."""
    records, _ = await store.list_snapshots()
    for record in records:
        data = dict(record.data)
        for entry in data["pending"]:
            for key in ("suspended_at", "expires_at"):
                if entry.get(key):
                    moved = datetime.fromisoformat(entry[key]) - timedelta(seconds=seconds)
                    entry[key] = moved.isoformat()
        await store.save_snapshot(replace(record, data=data, version=record.version + 1))


async def test_a_click_after_expires_at_flips_the_card_to_expired_at_once(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, ts, card):
        await _backdate(store, TTL + 1)  # expired a second ago; no sweep has run
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert (ephemeral["user"], ephemeral["text"]) == ("U2", msg.EXPIRED)
        [update] = bot.updates_of(card.ts)
        assert update["blocks"][0]["text"]["text"].startswith("⌛ Expired")
        assert _buttons(update["blocks"]) == [ASK_AGAIN_ACTION]  # no decision button
        assert bot.texts(ts)[-1] == "The deletion expired; nothing changed."
        [expired] = [e for e in await store.query_audit() if e.kind == "expired"]
        assert expired.data["message_ts"] == card.ts
        assert await sweep_expired(bot.services, now=utcnow() + timedelta(days=1)) == 0


async def test_the_background_sweeps_through_the_runner_and_stops(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, _ts, card):
        background = Background(bot.services).start()
        assert bot.services.runner.pending == 1  # recovery; the first sweep follows
        await bot.settle()
        await background.stop()
        await bot.settle()
        assert bot.services.runner.pending == 0
        assert executions.of("delete_record") == [] and bot.updates_of(card.ts) == []


async def test_opening_decline_after_expires_at_opens_nothing_and_flips_the_card(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with _pending(slack, store, executions) as (bot, _, _ts, card):
        await _backdate(store, TTL + 1)
        await bot.click(card, "approval:decline", user="U2")
        await bot.settle()
        assert bot.opened_views() == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.EXPIRED
        flipped = bot.slack.messages[card.ts].blocks
        assert flipped[0]["text"]["text"].startswith("⌛ Expired")
        assert _buttons(flipped) == [ASK_AGAIN_ACTION]  # no decision button


async def test_ask_again_on_an_expired_card_presents_the_same_call_anew_for_its_requester(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script = [
        call("delete_record", {"id": "x"}),
        reply("It expired; nothing changed."),
        reply("Deleted x."),  # after the call asked again is approved
    ]
    agent, model = make_agent(script, executions)
    async with start_bot(slack, agent, store, env={"APPROVAL_TTL_SECONDS": str(TTL)}) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        await sweep_expired(bot.services, now=utcnow() + timedelta(seconds=TTL + 1))
        await bot.settle()
        [expired] = bot.cards(ts)
        told = json.loads(model.requests[-1].messages[-1].content or "")
        assert told["status"] == "expired"  # the model hears expired, not declined

        await bot.click(expired, ASK_AGAIN_ACTION, user="U2")  # not the requester
        await bot.settle()
        [refusal] = slack.calls_to("chat.postEphemeral")
        assert refusal["user"] == "U2" and "Only the person who asked" in refusal["text"]
        assert len(bot.cards(ts)) == 1

        await bot.click(expired, ASK_AGAIN_ACTION, user="U1")
        await bot.click(expired, ASK_AGAIN_ACTION, user="U1")  # a double click asks once
        await bot.settle()
        old, new = bot.cards(ts)
        assert "Asked again below" in json.dumps(old.blocks)
        assert ASK_AGAIN_ACTION not in json.dumps(old.blocks)
        assert "Approve delete-record?" in json.dumps(new.blocks)
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert (pending.tool_name, pending.args, pending.requested_by) == (
            "delete_record",
            {"id": "x"},
            "U1",
        )
        assert pending.expires_at is not None and pending.expires_at > utcnow()

        await bot.click(new, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "x"}]
        assert bot.texts(ts)[-1] == "Deleted x."
