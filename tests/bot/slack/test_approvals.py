"""Approval cards: posted for a gated call, decided by a click, updated in place."""

from __future__ import annotations

import asyncio

from agents import Agent
from agents.models import ScriptedModel, call, calls, reply
from bot import APPROVE_ACTION, DECLINE_ACTION
from bot.policy import Refusal
from bot.slack._ids import EDIT_ACTION, WITHDRAW_ACTION
from bot.slack.blocks._refs import ApprovalRef
from bot.slack.deciding._workspace import Choice
from bot.slack.delivery._card_index import PostedCard
from storage import Storage
from tests.bot.conftest import BotFactory
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

GATED = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]


def _has_buttons(blocks: list[dict]) -> bool:
    return any(b["type"] == "actions" for b in blocks)


async def test_gated_call_posts_a_card_and_approve_runs_the_tool(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert _has_buttons(card.blocks)
        assert "delete_record" in card.text
        assert executions.of("delete_record") == []
        presented = await bot.services.storage.query_audit()
        assert any(e.kind == "presented" and e.data["ts"] == card.ts for e in presented)

        response = await bot.click(card, APPROVE_ACTION, user="U2")
        assert response.status == 200
        await bot.settle()

        assert executions.of("delete_record") == [{"id": "abc-123"}]
        [updated] = bot.cards(ts)
        assert not _has_buttons(updated.blocks)
        assert "Approved by <@U2>" in str(updated.blocks)
        assert "<!date^" in str(updated.blocks)
        assert bot.texts(ts)[-1] == "Deleted abc-123."


async def test_card_shows_requester_and_buttons_per_spec(bot_with: BotFactory) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        assert "<@U1>" in str(card.blocks)
        [actions] = [b for b in card.blocks if b["type"] == "actions"]
        styles = {e["action_id"]: e.get("style") for e in actions["elements"]}
        assert styles == {
            APPROVE_ACTION: "primary",
            EDIT_ACTION: None,
            DECLINE_ACTION: "danger",
            WITHDRAW_ACTION: None,
        }


async def test_decline_never_runs_the_tool_and_the_model_answers(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with([call("delete_record", {"id": "x"}), reply("OK, not deleted.")]) as (
        bot,
        model,
    ):
        ts = await bot.mention("delete x")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.decline(card, user="U2")
        assert executions.of("delete_record") == []
        [updated] = bot.cards(ts)
        assert "Declined by <@U2>" in str(updated.blocks)
        assert not _has_buttons(updated.blocks)
        assert bot.texts(ts)[-1] == "OK, not deleted."
        tool_message = model.requests[-1].messages[-1]
        assert tool_message.role == "tool" and "declined" in (tool_message.content or "").lower()


async def test_second_click_gets_already_decided_and_runs_nothing(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123")
        await bot.settle()
        [card] = bot.cards(ts)
        first, second = await asyncio.gather(
            bot.click(card, APPROVE_ACTION, user="U2"), bot.click(card, APPROVE_ACTION, user="U3")
        )
        assert first.status == second.status == 200
        await bot.settle()
        assert len(executions.of("delete_record")) == 1
        assert len(bot.updates_of(card.ts)) == 1
        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert "already approved by <@U" in ephemeral["text"]
        assert ephemeral["user"] in ("U2", "U3")
        assert ephemeral["user"] not in str(bot.cards(ts)[0].blocks)
        assert bot.texts(ts) == ["Deleted abc-123."]


async def test_click_after_the_run_finished_gets_an_ephemeral(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        await bot.decline(card, user="U3")
        assert len(executions.of("delete_record")) == 1
        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == "U3" and "<@U2>" in ephemeral["text"]


async def test_refused_click_gets_an_ephemeral_and_changes_nothing(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    class OnlyU9:
        async def refusal(
            self, *, user: str, team: str | None, card: PostedCard | None, choice: Choice
        ) -> Refusal | None:
            assert card is not None and card.view.tool_name == "delete_record"
            if user == "U9":
                return None
            return Refusal(rule="not-approver", text="You are not an approver for this request.")

    agent, _ = make_agent(GATED, executions)
    async with start_bot(slack, agent, store, policy=OnlyU9()) as bot:
        ts = await bot.mention("delete record abc-123")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        assert bot.updates_of(card.ts) == []
        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert (ephemeral["user"], ephemeral["text"]) == (
            "U2",
            "You are not an approver for this request.",
        )
        await bot.click(card, APPROVE_ACTION, user="U9")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]


async def test_parallel_gated_calls_share_one_batch_card_and_the_model_waits_for_both(
    bot_with: BotFactory, executions: Executions
) -> None:
    script = [
        calls(call("delete_record", {"id": "a"}), call("delete_record", {"id": "b"})),
        reply("Deleted a, kept b."),
    ]
    async with bot_with(script) as (bot, model):
        ts = await bot.mention("delete a and b")
        await bot.settle()
        [card] = bot.cards(ts)  # SPEC 12: one batch card, each call with its own ⋯ menu
        await bot.choose(card, 1, "approve")  # the first row's Approve
        await bot.settle()
        assert len(model.requests) == 1
        [card] = bot.cards(ts)
        await bot.choose(card, 2, "decline")  # the decline modal, submitted without a reason
        await bot.settle()
        await bot.submit(bot.opened_views()[-1], {})
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "a"}]
        [card] = bot.cards(ts)
        assert "Approved by" in str(card.blocks) and "Declined by" in str(card.blocks)
        assert not any(b["type"] == "actions" or b.get("accessory") for b in card.blocks)
        assert bot.texts(ts) == ["Deleted a, kept b."]


async def test_sub_agent_approval_names_the_inner_tool_and_the_agent_chain(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    inner, _ = make_agent([call("delete_record", {"id": "z"}), reply("inner done")], executions)
    inner.description = "Deletes records"
    outer = Agent(
        id="supervisor",
        model=ScriptedModel([call("agent-ops", {"prompt": "delete z"}), reply("All done.")]),
        agents={"ops": inner},
    )
    async with start_bot(slack, outer, store) as bot:
        ts = await bot.mention("please delete z")
        await bot.settle()
        [card] = bot.cards(ts)
        text = str(card.blocks)
        assert "delete_record" in text and "supervisor" in text
        await bot.click(card, APPROVE_ACTION)
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "z"}]
        assert bot.texts(ts)[-1] == "All done."


async def test_card_is_posted_only_after_the_snapshot_is_stored(bot_with: BotFactory) -> None:
    seen: list[bool] = []
    async with bot_with(GATED) as (bot, _):

        async def check(args: dict) -> None:
            if args.get("blocks"):
                value = next(b for b in args["blocks"] if b["type"] == "actions")["elements"][0]
                ref = ApprovalRef.decode(value["value"])
                assert ref is not None
                seen.append(await bot.services.storage.load_snapshot(ref.run_id) is not None)

        bot.slack.on("chat.postMessage", check)
        await bot.mention("delete record abc-123")
        await bot.settle()
    assert seen == [True]


async def test_runs_use_the_spec_thread_and_resource_ids(bot_with: BotFactory) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123", channel="C7")
        await bot.settle()
        page = await bot.services.agent.list_suspended_runs(resource_id="slack:T1:C7")
        [run] = page.runs
        assert run.thread_id == f"slack:T1:C7:{ts}"
        assert run.tool_calls[0].tool_name == "delete_record"


async def test_an_undeliverable_ephemeral_is_not_shown_to_the_thread(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        bot.slack.fail_next("chat.postEphemeral", error="user_not_in_channel")
        await bot.click(card, APPROVE_ACTION, user="U3")
        await bot.settle()
        assert bot.texts(ts) == ["Deleted abc-123."]
        assert len(executions.of("delete_record")) == 1


async def test_a_card_that_cannot_be_updated_does_not_stop_the_answer(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123")
        await bot.settle()
        [card] = bot.cards(ts)
        bot.slack.fail_next("chat.update", error="message_not_found")
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        assert bot.texts(ts) == ["Deleted abc-123."]
