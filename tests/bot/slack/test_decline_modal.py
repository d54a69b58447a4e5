"""Decline opens a modal with an optional reason; the reason reaches the model, the card and
the audit log; authorization and state are checked again on submit."""

from __future__ import annotations

import json

import bot.slack._messages as msg
from agents.models import ScriptItem, call, reply
from bot.slack._ids import APPROVE_ACTION, DECLINE_ACTION, DECLINE_VIEW, REASON_BLOCK
from bot.slack.blocks._refs import ModalRef
from storage import Storage
from tests.bot.conftest import BotFactory
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

GATED: list[ScriptItem] = [call("delete_record", {"id": "x"}), reply("OK, not deleted.")]


def _reason(text: str | None) -> dict[str, object]:
    return {REASON_BLOCK: {"value": {"type": "plain_text_input", "value": text}}}


async def test_decline_opens_a_modal_with_the_click_trigger_and_opaque_metadata(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, DECLINE_ACTION)
        await bot.settle()
        [opened] = bot.slack.calls_to("views.open")
        assert opened["trigger_id"] == "trigger-1"
        view = opened["view"]
        assert view["callback_id"] == DECLINE_VIEW
        reason = next(b for b in view["blocks"] if b.get("block_id") == REASON_BLOCK)
        assert reason["optional"] is True and reason["element"]["multiline"] is True
        meta = ModalRef.decode(view["private_metadata"])
        assert meta is not None and len(view["private_metadata"]) < 3000
        assert (meta.channel, meta.message_ts, meta.thread_ts) == ("C1", card.ts, ts)
        assert executions.of("delete_record") == [] and bot.updates_of(card.ts) == []


async def test_the_reason_reaches_the_model_the_card_and_the_audit_log(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, model):
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        response = await bot.decline(card, user="U2", reason="Customer asked to keep it")
        assert response.status == 200
        assert executions.of("delete_record") == []
        tool_message = model.requests[-1].messages[-1]
        assert tool_message.role == "tool"
        assert "Customer asked to keep it" in (tool_message.content or "")
        [updated] = bot.cards(ts)
        assert "Declined by <@U2>" in json.dumps(updated.blocks)
        assert "Customer asked to keep it" in json.dumps(updated.blocks)
        [decided] = [e for e in await bot.services.storage.query_audit() if e.kind == "decided"]
        assert (decided.actor, decided.source) == ("U2", "modal")
        assert decided.data["reason"] == "Customer asked to keep it"
        assert bot.texts(ts)[-1] == "OK, not deleted."


async def test_an_empty_reason_declines_without_one(bot_with: BotFactory) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.decline(card, reason="   ")
        [decided] = [e for e in await bot.services.storage.query_audit() if e.kind == "decided"]
        assert decided.data["decision"] == "declined" and decided.data["reason"] is None


async def test_a_decision_taken_while_the_modal_was_open_wins(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, DECLINE_ACTION, user="U3")
        await bot.settle()
        [view] = bot.opened_views()
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        response = await bot.submit(view, _reason("too late"), user="U3")
        assert response.status == 200
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "x"}]
        assert len(bot.updates_of(card.ts)) == 1
        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == "U3" and "already approved by <@U2>" in ephemeral["text"]
        assert "too late" not in json.dumps(bot.cards(ts)[0].blocks)


async def test_authorization_is_checked_again_on_submit(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent(GATED, executions)
    async with start_bot(slack, agent, store, env={"APPROVERS": "U2"}) as bot:
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, DECLINE_ACTION, user="U2")
        await bot.settle()
        [view] = bot.opened_views()
        await bot.submit(view, _reason("not mine to decide"), user="U3")
        await bot.settle()
        assert bot.updates_of(card.ts) == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert (ephemeral["user"], ephemeral["text"]) == ("U3", msg.REFUSED_NOT_APPROVER)
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert (refused.source, refused.data["choice"]) == ("modal", "decline")
        pending = await bot.services.agent.list_suspended_runs(thread_id=f"slack:T1:C1:{ts}")
        assert pending.total == 1


async def test_a_refused_user_gets_no_modal(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent(GATED, executions)
    async with start_bot(slack, agent, store, env={"APPROVERS": "U2"}) as bot:
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, DECLINE_ACTION, user="U3")
        await bot.settle()
        assert bot.opened_views() == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.REFUSED_NOT_APPROVER
