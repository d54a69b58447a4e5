"""A card posted before a restart is decided after it: new process objects, same database."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.models import call, reply
from bot import APPROVE_ACTION
from storage import create_storage
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI


async def test_click_after_a_restart_runs_the_tool_and_updates_the_card(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    executions = Executions()
    async with FakeSlackAPI() as slack:
        store = create_storage(url)
        try:
            agent, _ = make_agent([call("delete_record", {"id": "abc-123"})], executions)
            async with start_bot(slack, agent, store) as before:
                ts = await before.mention("delete record abc-123", user="U1")
                await before.settle()
                [card] = before.cards(ts)
        finally:
            await store.close()

        store = create_storage(url)
        try:
            agent, model = make_agent([reply("Deleted after the restart.")], executions)
            async with start_bot(slack, agent, store) as after:
                response = await after.click(card, APPROVE_ACTION, user="U2")
                assert response.status == 200
                await after.settle()
                assert executions.of("delete_record") == [{"id": "abc-123"}]
                [updated] = after.cards(ts)
                assert "Approved by <@U2>" in str(updated.blocks)
                assert "<@U1>" in str(updated.blocks)
                assert after.texts(ts) == ["Deleted after the restart."]
                assert len(model.requests) == 1
        finally:
            await store.close()


async def test_two_instances_on_one_database_decide_a_double_click_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    executions = Executions()
    async with FakeSlackAPI() as slack:
        store_a, store_b = create_storage(url), create_storage(url)
        try:
            agent_a, _ = make_agent(
                [call("delete_record", {"id": "abc-123"}), reply("Done by A.")], executions
            )
            agent_b, _ = make_agent([reply("Done by B.")], executions)
            async with (
                start_bot(slack, agent_a, store_a) as a,
                start_bot(slack, agent_b, store_b) as b,
            ):
                ts = await a.mention("delete record abc-123")
                await a.settle()
                [card] = a.cards(ts)
                first, second = await asyncio.gather(
                    a.click(card, APPROVE_ACTION, user="U2"),
                    b.click(card, APPROVE_ACTION, user="U3"),
                )
                assert first.status == second.status == 200
                await asyncio.gather(a.settle(), b.settle())
                assert executions.of("delete_record") == [{"id": "abc-123"}]
                assert len(a.updates_of(card.ts)) == 1
                assert len(slack.calls_to("chat.postEphemeral")) == 1
                assert len(a.texts(ts)) == 1
        finally:
            await store_a.close()
            await store_b.close()
