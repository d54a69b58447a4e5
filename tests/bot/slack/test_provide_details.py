""" "Provide details" on a suspended call: a modal from the tool's resume_schema; submitting
resumes the call (source ``modal``); invalid data stays in the modal, the call suspended."""

from __future__ import annotations

from typing import Any

from agents.models import call, obj, reply
from bot.slack._ids import PROVIDE_ACTION, PROVIDE_VIEW
from tests.bot.conftest import BotFactory
from tests.bot.harness import CHANNEL, Bot, Executions
from tests.fakes.slack_api import PostedMessage

ASK = call("open_ticket", {"title": "Printer on fire"})


async def _question(bot: Bot) -> tuple[str, PostedMessage]:
    ts = await bot.mention("open a ticket: printer on fire")
    await bot.settle()
    [question] = bot.slack.thread(CHANNEL, ts)
    return ts, question


async def _open(bot: Bot, question: PostedMessage, user: str = "U1") -> dict[str, Any]:
    assert (await bot.click(question, PROVIDE_ACTION, user=user)).status == 200
    await bot.settle()
    [view] = bot.opened_views()
    return view


def _priority(value: str | None) -> dict[str, Any]:
    return {"field:priority": {"value": {"type": "plain_text_input", "value": value}}}


async def test_the_question_has_a_provide_details_button_opening_the_resume_form(
    bot_with: BotFactory,
) -> None:
    async with bot_with([ASK]) as (bot, _):
        _, question = await _question(bot)
        [actions] = [b for b in question.blocks if b["type"] == "actions"]
        assert [e["action_id"] for e in actions["elements"]] == [PROVIDE_ACTION]
        view = await _open(bot, question)
        assert view["callback_id"] == PROVIDE_VIEW
        [field] = [b for b in view["blocks"] if b["type"] == "input"]
        assert field["block_id"] == "field:priority" and field["optional"] is False
        assert field["element"]["type"] == "plain_text_input"


async def test_submitting_resumes_the_call(bot_with: BotFactory, executions: Executions) -> None:
    async with bot_with([ASK, reply("Opened T-1.")]) as (bot, _):
        ts, question = await _question(bot)
        view = await _open(bot, question, user="U3")
        response = await bot.submit(view, _priority("high"), user="U3")
        assert response.status == 200 and await response.text() == ""
        await bot.settle()
        assert executions.of("open_ticket") == [{"title": "Printer on fire", "priority": "high"}]
        assert bot.texts(ts)[-1] == "Opened T-1."
        answered = bot.slack.messages[question.ts]
        assert not any(b["type"] == "actions" for b in answered.blocks)
        assert "Details provided by <@U3>" in str(answered.blocks)
        assert "Which priority" in str(answered.blocks)
        fields = [f["text"] for b in answered.blocks for f in b.get("fields") or []]
        assert fields == ["*priority*\n`high`"]  # as arguments are shown, not raw JSON
        assert "```" not in str(answered.blocks)
        [resumed] = [e for e in await bot.services.storage.query_audit() if e.kind == "decided"]
        assert (resumed.actor, resumed.source) == ("U3", "modal")
        assert resumed.data["decision"] == "resumed"
        assert resumed.data["resume_data"] == {"priority": "high"}


async def test_missing_data_is_shown_in_the_modal_and_the_call_stays_suspended(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with([ASK]) as (bot, _):
        ts, question = await _question(bot)
        view = await _open(bot, question)
        response = await bot.submit(view, _priority(None))
        body = await response.json()
        assert body["response_action"] == "errors" and list(body["errors"]) == ["field:priority"]
        await bot.settle()
        assert executions.of("open_ticket") == []
        pending = await bot.services.agent.list_suspended_runs(thread_id=f"slack:T1:{CHANNEL}:{ts}")
        assert pending.total == 1


async def test_a_second_submit_after_the_call_resumed_gets_an_ephemeral(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with([ASK, reply("Opened T-1.")]) as (bot, _):
        ts, question = await _question(bot)
        view = await _open(bot, question)
        await bot.submit(view, _priority("low"), user="U2")
        await bot.settle()
        await bot.submit(view, _priority("high"), user="U3")
        await bot.settle()
        assert len(executions.of("open_ticket")) == 1
        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == "U3" and "no longer pending" in ephemeral["text"]
        assert bot.texts(ts) == ["Opened T-1."]


async def test_details_given_on_a_question_asked_again_leave_no_live_button(
    bot_with: BotFactory, executions: Executions
) -> None:
    script = [ASK, obj({"answered": False, "resume_data": None}), reply("Hm?"), reply("Opened.")]
    async with bot_with(script) as (bot, _):
        ts, _first = await _question(bot)
        await bot.message("make it the most urgent one", thread_ts=ts)
        await bot.settle()
        [_, again] = bot.slack.thread(CHANNEL, ts)
        view = await _open(bot, again, user="U3")
        await bot.submit(view, _priority("high"), user="U3")
        await bot.settle()
        assert executions.of("open_ticket") == [{"title": "Printer on fire", "priority": "high"}]
        thread = bot.slack.thread(CHANNEL, ts)
        assert not any(b["type"] == "actions" for m in thread for b in m.blocks)
        assert "Details provided by <@U3>" in str(bot.slack.messages[again.ts].blocks)
        assert thread[-1].text == "Opened."
