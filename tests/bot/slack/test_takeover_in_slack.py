"""An instance whose call another instance took over posts nothing more in the thread: the
call's one outcome is the new owner's to post (SPEC 3.4)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from agents import Agent
from agents.models import ScriptedModel, call, reply
from bot import APPROVE_ACTION
from storage import Storage, utcnow
from tests.bot.harness import RecordInput, start_bot
from tests.fakes.slack_api import FakeSlackAPI
from tools import ToolContext, create_tool


async def test_a_bot_whose_call_was_taken_over_posts_neither_answer_nor_failure(
    slack: FakeSlackAPI, store: Storage
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        started.set()
        await release.wait()  # this instance "pauses" here while another takes over
        return {"deleted": input.id}

    model = ScriptedModel([call("delete_record", {"id": "9"}), reply("Deleted 9 (told twice).")])
    tool = create_tool(
        id="delete-record",
        description="Delete a record by id",
        input_schema=RecordInput,
        execute=delete,
        require_approval=True,
    )
    agent = Agent(id="ops", name="Ops", model=model, tools={"delete_record": tool})
    async with start_bot(slack, agent, store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, APPROVE_ACTION, user="U2")).status == 200
        await asyncio.wait_for(started.wait(), 30)
        later = utcnow() + timedelta(hours=1)  # another instance took the lapsed claim over
        [taken] = await store.take_over_expired_claims("B", now=later, lease_until=later)

        release.set()
        await bot.settle()

        assert taken.epoch == 1
        assert bot.texts(ts) == []  # no answer, no "something went wrong"
        assert len(slack.thread(card.channel, ts)) == 1  # the card, approved at the click
        assert len(model.requests) == 1
        [claim] = await store.list_claims(taken.run_id)
        assert claim.status == "claimed" and claim.owner == "B"
