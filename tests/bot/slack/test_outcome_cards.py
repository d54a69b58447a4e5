"""Whoever records an outcome brings its card to it, drawn from storage (SPEC 12, issue 33):
a takeover that ran an idempotent call again shows "Approved" with who approved it (its card
kept its buttons), an interrupted call says who approved it and that the instance running it
stopped (never "Interrupted by someone"), and a click on a card whose record was lost draws
the card from the pending call (never "Approved: ?")."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents import Agent
from agents.models import ScriptedModel, call, reply
from bot import APPROVE_ACTION
from bot.background._periodic import Background
from storage import ClaimRecord, Storage, utcnow
from tests.bot.harness import CHANNEL, RecordInput, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage
from tools import ToolContext, create_tool


def _agent(ran: list[str], *, idempotent: bool, script: list[Any]) -> Agent:
    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        ran.append(input.id)
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        title="Delete a record",
        description="Delete a record by id",
        input_schema=RecordInput,
        execute=delete,
        require_approval=True,
        idempotent=idempotent,
    )
    return Agent(id="ops", name="Ops", model=ScriptedModel(script), tools={"delete_record": tool})


def _header(card: PostedMessage) -> str:
    return str(card.blocks[0]["text"]["text"])


async def _claimed_by_a_dead_instance(bot: Any, store: Storage) -> None:
    [run] = (await bot.agent.list_suspended_runs()).runs
    call_id = run.tool_calls[0].tool_call_id
    await store.claim(  # approved by U2 an hour ago on an instance that died mid-tool
        ClaimRecord(
            run_id=run.run_id,
            key=f"{call_id}#0",
            tool_call_id=call_id,
            decision="approved",
            decided_by="U2",
            decided_at=utcnow() - timedelta(hours=1),
            owner="dead-instance",
            lease_until=utcnow() - timedelta(hours=1),
        )
    )


async def test_a_retried_idempotent_call_shows_approved_by_whom_on_its_card(
    slack: FakeSlackAPI, store: Storage
) -> None:
    ran: list[str] = []
    agent = _agent(ran, idempotent=True, script=[call("delete_record", {"id": "9"}),
                                                 reply("Deleted 9.")])  # fmt: skip
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        await _claimed_by_a_dead_instance(bot, store)
        background = Background(bot.services).start()
        await bot.settle()
        await background.stop()
        [card] = bot.cards(ts)
    assert ran == ["9"]
    assert bot.texts(ts) == ["Deleted 9."]
    assert _header(card) == "✅ Approved: Delete a record"
    assert not [b for b in card.blocks if b["type"] == "actions"]
    assert "Approved by <@U2>" in str(card.blocks)
    assert "ran it again" in str(card.blocks)


async def test_an_interrupted_call_says_who_approved_it_and_that_its_instance_stopped(
    slack: FakeSlackAPI, store: Storage
) -> None:
    ran: list[str] = []
    agent = _agent(ran, idempotent=False, script=[call("delete_record", {"id": "9"}),
                                                  reply("Not done.")])  # fmt: skip
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        await _claimed_by_a_dead_instance(bot, store)
        background = Background(bot.services).start()
        await bot.settle()
        await background.stop()
        [card] = [m for m in slack.thread(CHANNEL, ts) if m.blocks]
    assert ran == []
    assert _header(card) == "⚠️ Interrupted: Delete a record"
    assert "Interrupted after <@U2> approved it" in str(card.blocks)
    assert "the instance running it stopped" in str(card.blocks)
    assert card.text.startswith("Interrupted after U2 approved it: Delete a record")
    assert "someone" not in card.text


async def test_a_click_on_a_card_whose_record_was_lost_shows_the_tools_title(
    slack: FakeSlackAPI, store: Storage
) -> None:
    ran: list[str] = []
    agent = _agent(ran, idempotent=False, script=[call("delete_record", {"id": "9"}),
                                                  reply("Deleted 9.")])  # fmt: skip
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        [run] = (await bot.agent.list_suspended_runs()).runs
        call_id = run.tool_calls[0].tool_call_id
        assert await store.delete_card(run.run_id, call_id)  # posted, its record lost
        assert (await bot.click(card, APPROVE_ACTION, user="U2")).status == 200
        await bot.settle()
        [card] = bot.cards(ts)
        assert await bot.services.cards.find(run.run_id, call_id) is not None
    assert ran == ["9"]
    assert _header(card) == "✅ Approved: Delete a record"
    assert "?" not in card.text
