"""Expiry: a reminder before the TTL, then declined with reason "expired", card updated,
audited; a late click gets an ephemeral. The sweep is called directly with an injected clock."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import bot.slack._messages as msg
from agents.models import ScriptedModel, call, reply
from bot.background._periodic import Background, sweep_expired, sweep_interval
from bot.slack._ids import APPROVE_ACTION
from storage import Storage, utcnow
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

TTL = 3600


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
        assert not any(b["type"] == "actions" for b in updated.blocks)
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


def test_the_sweep_interval_follows_the_ttl_within_bounds() -> None:
    assert sweep_interval(60) == 6.0
    assert sweep_interval(86400) == 60.0
    assert sweep_interval(5) == 1.0


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
