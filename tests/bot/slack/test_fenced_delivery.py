"""One delivery path, fenced like storage (SPEC 3.4, issue 33): an instance whose work another
instance took over sends Slack nothing more, not even what it had ready, while the model was
still answering when the takeover happened (the new owner posts the one answer)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from agents import Agent
from agents.models import ModelEvent, ModelRequest, ScriptedModel, call, reply
from bot import APPROVE_ACTION
from storage import Storage, utcnow
from tests.bot.harness import RecordInput, start_bot
from tests.bot.slack.test_assistant_threads import DM, ask, open_assistant_thread
from tests.fakes.slack_api import FakeSlackAPI
from tools import ToolContext, create_tool


class HeldAnswer:
    """A scripted model whose answer after the tool's result waits for ``release``."""

    def __init__(self, script: list[Any]) -> None:
        self.inner = ScriptedModel(script)
        self.answering, self.release = asyncio.Event(), asyncio.Event()

    @property
    def model_id(self) -> str:
        return "held"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.messages[-1].role == "tool":
            self.answering.set()
            await self.release.wait()  # this instance "pauses" while another takes over
        async for event in self.inner.stream(request):
            yield event


def _agent(model: HeldAnswer) -> Agent:
    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, Any]:
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        description="Delete a record by id",
        input_schema=RecordInput,
        execute=delete,
        require_approval=True,
    )
    return Agent(id="ops", name="Ops", model=model, tools={"delete_record": tool})


async def _take_the_answer_over(store: Storage) -> None:
    later = utcnow() + timedelta(hours=1)  # another instance took the lapsed answer over
    [taken] = await store.take_over_expired_claims("B", now=later, lease_until=later)
    assert taken.key.startswith("continue#") and taken.epoch == 1


async def test_an_answer_taken_over_while_the_model_answered_is_never_posted_here(
    slack: FakeSlackAPI, store: Storage
) -> None:
    model = HeldAnswer([call("delete_record", {"id": "9"}), reply("Deleted 9 (told twice).")])
    async with start_bot(slack, _agent(model), store) as bot:
        ts = await bot.mention("delete record 9", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert (await bot.click(card, APPROVE_ACTION, user="U2")).status == 200
        await asyncio.wait_for(model.answering.wait(), 30)
        await _take_the_answer_over(store)
        model.release.set()
        await bot.settle()
        assert bot.texts(ts) == []  # neither the answer nor a failure: B posts the answer
        assert slack.calls_to("chat.postMessage")[-1]["blocks"]  # the card was the last post


async def test_a_streamed_answer_taken_over_sends_no_more_text(
    slack: FakeSlackAPI, store: Storage
) -> None:
    model = HeldAnswer([call("delete_record", {"id": "9"}), reply("Deleted 9 (told twice).")])
    async with start_bot(slack, _agent(model), store) as bot:
        thread_ts = await open_assistant_thread(bot)
        await ask(bot, thread_ts, "delete record 9")
        [card] = bot.cards(thread_ts, channel=DM)
        assert (await bot.click(card, APPROVE_ACTION, user="U2")).status == 200
        await asyncio.wait_for(model.answering.wait(), 30)
        before = len(slack.calls)
        await _take_the_answer_over(store)
        model.release.set()
        await bot.settle()
        told = {c.method for c in slack.calls[before:] if c.get("ts") != card.ts}  # not the card
        assert not told & {"chat.postMessage", "chat.startStream", "chat.appendStream",
                           "chat.stopStream", "chat.update"}  # fmt: skip
        assert "told twice" not in str([m.text for m in slack.thread(DM, thread_ts)])
