"""A card posted before a restart is decided after it: new process objects, same database."""

from __future__ import annotations

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
