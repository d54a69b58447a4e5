"""Escalation (SPEC 15): at each ``escalate`` step of its rule a pending call's thread gets one
message mentioning the step's ``notify``, the step's ``approvers`` may approve that call (inside
the claim), and its card says so; the model is not called, the TTL still expires the call, and
every step happens once across instances. The sweep is called with an injected clock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import bot.slack._messages as msg
from agents import Approve
from agents.models import ScriptedModel, call, reply
from bot.background._periodic import sweep
from bot.slack._ids import APPROVE_ACTION, thread_id
from storage import Storage
from tests.backends import SHARED_BACKENDS, open_storage, unique_url
from tests.bot.harness import CHANNEL, TEAM, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

POLICY = """
[[rules]]
tools = ["delete-*"]
approvers = ["U2"]
ttl_seconds = 7200
escalate = [
  { after = "15m", notify = ["S0ONCALL", "U9"] },
  { after = "1h", approvers = ["S0LEADS"], notify = ["S0LEADS"] },
]
"""


def _env(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "countersign.toml"
    path.write_text(POLICY, encoding="utf-8")
    return {"POLICY_FILE": str(path)}


def _context(blocks: list[dict[str, object]]) -> str:
    return json.dumps([b for b in blocks if b["type"] == "context"])


async def _presented(bot: Bot) -> datetime:
    [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
    assert pending.suspended_at is not None
    return pending.suspended_at


@asynccontextmanager
async def _pending(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> AsyncIterator[tuple[Bot, ScriptedModel, str, PostedMessage, datetime]]:
    slack.usergroups["S0LEADS"] = ["U7"]
    script = [call("delete_record", {"id": "x"}), reply("Deleted x.")]
    agent, model = make_agent(script, executions)
    async with start_bot(slack, agent, store, env=_env(tmp_path)) as bot:
        ts = await bot.mention("delete x", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        yield bot, model, ts, card, await _presented(bot)


async def test_each_step_mentions_once_and_the_second_lets_its_approvers_approve(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _pending(slack, store, executions, tmp_path) as (bot, model, ts, card, start):
        asked = len(model.requests)
        early = await sweep(bot.services, now=start + timedelta(minutes=10))
        assert early.escalated == 0 and early.next_due == start + timedelta(minutes=15)
        assert bot.texts(ts) == [] and bot.updates_of(card.ts) == []

        first = await sweep(bot.services, now=start + timedelta(minutes=16))
        await bot.settle()  # the card's update is a runner job
        assert first.escalated == 1 and first.next_due == start + timedelta(hours=1)
        [told] = bot.texts(ts)
        assert told.startswith("<!subteam^S0ONCALL> <@U9>: ") and "waited 15m" in told
        assert "delete_record" in told and "may now approve" not in told
        [marked] = bot.updates_of(card.ts)
        assert "Escalated (step 1)" in _context(marked["blocks"])
        assert (await sweep(bot.services, now=start + timedelta(minutes=17))).escalated == 0
        assert len(bot.texts(ts)) == 1 and len(bot.updates_of(card.ts)) == 1

        await bot.click(card, APPROVE_ACTION, user="U7")  # a lead, before the step adding them
        await bot.settle()
        assert executions.of("delete_record") == []
        [refused] = slack.calls_to("chat.postEphemeral")
        assert refused["user"] == "U7"

        second = await sweep(bot.services, now=start + timedelta(minutes=61))
        await bot.settle()
        assert second.escalated == 1
        assert second.next_due == start + timedelta(minutes=96)  # the reminder, at 80 %
        told = bot.texts(ts)[-1]
        assert told.startswith("<!subteam^S0LEADS>: ") and "waited 1h" in told
        assert told.endswith(msg.ESCALATION_APPROVERS.format(who="<!subteam^S0LEADS>")), told
        updated = bot.updates_of(card.ts)[-1]
        assert msg.ESCALATED_APPROVERS.format(who="<!subteam^S0LEADS>") in _context(
            updated["blocks"]
        )
        assert "May approve: <@U2>" in _context(updated["blocks"])
        assert any(b["type"] == "actions" for b in updated["blocks"])  # still decidable
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert (pending.escalation_step, pending.escalated_approvers) == (2, ["S0LEADS"])
        assert len(model.requests) == asked  # the model was not called

        await bot.click(card, APPROVE_ACTION, user="U7")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "x"}]
        events = await store.query_audit()
        escalated = [e for e in events if e.kind == "escalated"]
        assert [(e.data["step"], e.data["approvers"]) for e in escalated] == [
            (1, []),
            (2, ["S0LEADS"]),
        ]
        assert [e.data["notify"] for e in escalated] == [["S0ONCALL", "U9"], ["S0LEADS"]]
        [decided] = [e for e in events if e.kind == "decided"]
        assert decided.actor == "U7"


async def test_a_late_sweep_takes_every_due_step_in_order_and_the_ttl_still_expires(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _pending(slack, store, executions, tmp_path) as (bot, _, ts, card, start):
        late = await sweep(bot.services, now=start + timedelta(minutes=90))
        assert late.escalated == 2 and late.next_due == start + timedelta(minutes=96)
        first, second = bot.texts(ts)
        assert "waited 15m" in first and "waited 1h" in second

        expired = await sweep(bot.services, now=start + timedelta(hours=2, seconds=1))
        await bot.settle()
        assert expired.expired == 1 and expired.escalated == 0
        assert executions.of("delete_record") == []
        assert "Expired" in json.dumps(bot.slack.messages[card.ts].blocks)
        await bot.click(card, APPROVE_ACTION, user="U7")  # escalated, yet too late
        await bot.settle()
        assert executions.of("delete_record") == []


async def test_a_call_decided_before_its_step_is_not_escalated(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _pending(slack, store, executions, tmp_path) as (bot, _, ts, card, start):
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        done = await sweep(bot.services, now=start + timedelta(minutes=61))
        assert done.escalated == 0
        assert bot.texts(ts) == ["Deleted x."]
        assert [e for e in await store.query_audit() if e.kind == "escalated"] == []


@pytest.mark.parametrize("backend", [p for p in SHARED_BACKENDS if p.values[0] != "sqlite"])
async def test_two_instances_sweeping_at_once_take_each_step_once(
    backend: str, slack: FakeSlackAPI, executions: Executions, tmp_path: Path
) -> None:
    slack.usergroups["S0LEADS"] = ["U7"]
    env = _env(tmp_path)
    async with AsyncExitStack() as stack:
        url = await stack.enter_async_context(unique_url(backend, tmp_path))
        bots = []
        for _ in range(2):
            agent, _model = make_agent([call("delete_record", {"id": "x"})], executions)
            store = await stack.enter_async_context(open_storage(url))
            bots.append(await stack.enter_async_context(start_bot(slack, agent, store, env=env)))
        first, second = bots
        ts = await first.mention("delete x", user="U1")
        await first.settle()
        [card] = first.cards(ts)
        start = await _presented(second)
        for minutes, step in ((16, 1), (61, 2)):
            now = start + timedelta(minutes=minutes)
            passes = await asyncio.gather(*(sweep(b.services, now=now) for b in bots * 2))
            for each in bots:
                await each.settle()
            assert sum(p.escalated for p in passes) == 1, step
            assert len(first.texts(ts)) == step
            assert len(first.updates_of(card.ts)) == step
        [pending] = (await second.agent.list_suspended_runs()).runs[0].tool_calls
        assert (pending.escalation_step, pending.escalated_approvers) == (2, ["S0LEADS"])


async def test_a_call_decided_while_its_step_was_taken_keeps_its_card(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _pending(slack, store, executions, tmp_path) as (bot, _, ts, card, start):
        async with bot.services.locks.hold(thread_id(TEAM, CHANNEL, ts)):  # as a click does
            taken = await sweep(bot.services, now=start + timedelta(minutes=61))
            [run] = (await bot.agent.list_suspended_runs()).runs
            await bot.agent.decide(Approve(), run_id=run.run_id, decided_by="U7")
        await bot.settle()
        assert taken.escalated == 2 and executions.of("delete_record") == [{"id": "x"}]
        assert len(bot.texts(ts)) == 2  # both steps were told
        assert bot.updates_of(card.ts) == []  # the decided call's card is not made pending again


async def test_the_home_tab_of_an_escalated_approver_lists_the_call_from_that_step(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    async with _pending(slack, store, executions, tmp_path) as (bot, _, _ts, card, start):
        before = await bot.open_home("U7")
        assert "Nothing is waiting for you" in json.dumps(before)
        await sweep(bot.services, now=start + timedelta(minutes=61))
        await bot.settle()
        after = await bot.open_home("U7")
        assert card.ts.replace(".", "") in json.dumps(after)
        assert any(b["type"] == "actions" for b in after["blocks"])
