"""SPEC 12 batch cards in a thread: one card for a step's gated calls, each decided from its
row's ⋯ menu or all at once with "Approve all N" / "Decline all N" (``decide_many``, all or
nothing), the card drawn again after every decision, by a click, the HTTP API or the expiry
sweep."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from agents.models import call, calls, reply
from bot import APPROVE_ACTION
from bot.background._periodic import sweep_expired
from bot.slack._ids import APPROVE_ALL_ACTION, DECLINE_ALL_ACTION, ROW_ACTION
from bot.slack.blocks._home_view import HOME_BLOCK_PREFIX
from storage import Storage, utcnow
from tests.bot.conftest import BotFactory
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

STEP = [
    calls(*(call("delete_record", {"id": str(n)}, id=f"call_{n}") for n in (3, 4, 5))),
    reply("Deleted what you approved."),
]


def _live(card: PostedMessage) -> list[str]:
    """The card's buttons, and ``approval:approve`` for each row whose menu approves."""
    buttons = [e["action_id"] for b in card.blocks if b["type"] == "actions" for e in b["elements"]]
    rows = [
        APPROVE_ACTION
        for b in card.blocks
        if b.get("accessory", {}).get("action_id") == ROW_ACTION
        and any(json.loads(o["value"])["k"] == "approve" for o in b["accessory"]["options"])
    ]
    return rows + buttons


async def _click_row(
    bot: Bot, card: PostedMessage, row: int | str, action_id: str, user: str
) -> None:
    """Choose ``action_id`` in row ``row``'s menu (from 1; ``"all"``: Approve / Decline all)."""
    if row == "all":
        response = await bot.click(card, action_id, user=user)
    else:
        kind = {APPROVE_ACTION: "approve", "approval:decline": "decline"}[action_id]
        response = await bot.choose(card, int(row), kind, user=user)
    assert response.status == 200
    await bot.settle()


async def test_a_step_with_three_gated_calls_posts_one_batch_card_listing_each(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()

        [card] = bot.cards(ts)
        text = json.dumps(card.blocks)
        assert card.blocks[0]["text"]["text"] == "Approve 3 calls?"
        for n in (3, 4, 5):
            assert f"`{n}`" in text
        assert _live(card).count(APPROVE_ACTION) == 3
        assert _live(card)[-2:] == [APPROVE_ALL_ACTION, DECLINE_ALL_ACTION]
        for n in (3, 4, 5):  # each call is indexed, so expiry, Home and the API find it
            posted = await bot.services.cards.find(_run(bot), f"call_{n}")
            assert posted is not None and posted.ts == card.ts
            assert posted.batch == ("call_3", "call_4", "call_5")
        assert executions.of("delete_record") == []


def _run(bot: Bot) -> str:
    [event] = [e for e in bot.slack.calls_to("chat.postMessage") if e.args.get("metadata")]
    return str(event.args["metadata"]["event_payload"]["run_id"])


async def test_one_rows_approve_updates_the_batch_card_and_approve_all_decides_the_rest(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, model):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)

        await _click_row(bot, card, 2, APPROVE_ACTION, user="U2")

        [after_one] = bot.cards(ts)
        assert executions.of("delete_record") == [{"id": "4"}]
        assert _live(after_one).count(APPROVE_ACTION) == 2
        assert "Approved by <@U2>" in json.dumps(after_one.blocks)
        labels = [
            e["text"]["text"]
            for b in after_one.blocks
            if b["type"] == "actions"
            for e in b["elements"]
        ]
        assert "Approve all 2" in labels
        assert len(model.requests) == 1  # the step is not resolved yet

        await _click_row(bot, after_one, "all", APPROVE_ALL_ACTION, user="U3")

        assert sorted(a["id"] for a in executions.of("delete_record")) == ["3", "4", "5"]
        [done] = bot.cards(ts)
        assert _live(done) == []
        assert done.blocks[0]["text"]["text"] == "All 3 calls decided"
        assert json.dumps(done.blocks).count("Approved by <@U3>") == 2
        assert bot.texts(ts)[-1] == "Deleted what you approved."
        claims = await bot.services.storage.list_claims(_run(bot))
        assert {c.tool_call_id: c.decided_by for c in claims if c.tool_call_id} == {
            "call_3": "U3",
            "call_4": "U2",
            "call_5": "U3",
        }


async def test_decline_all_declines_every_call_and_nothing_runs(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)

        await _click_row(bot, card, "all", DECLINE_ALL_ACTION, user="U2")

        assert executions.of("delete_record") == []
        [done] = bot.cards(ts)
        assert _live(done) == [] and json.dumps(done.blocks).count("Declined by <@U2>") == 3


async def test_approve_all_refused_for_one_call_records_nothing_and_names_it(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    """A two-person rule: U2 approved call 4 already, so U2's "Approve all 3" is refused
    whole (naming call 4, row 2), and calls 3 and 5 get no approval from it."""
    policy = tmp_path / "countersign.toml"
    policy.write_text('[[rules]]\ntools = ["delete-*"]\napprovals = 2\n', encoding="utf-8")
    agent, _ = make_agent(STEP, executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        await _click_row(bot, card, 2, APPROVE_ACTION, user="U2")
        [card] = bot.cards(ts)
        assert "1 of 2 approvals: <@U2>" in json.dumps(card.blocks)

        await _click_row(bot, card, "all", APPROVE_ALL_ACTION, user="U2")

        [ephemeral] = bot.slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == "U2" and "call 2 (delete_record)" in ephemeral["text"]
        approvals = (await store.list_approvals([_run(bot)]))[_run(bot)]
        assert [(a.key.split("#")[0], a.approver) for a in approvals] == [("call_4", "U2")]
        assert executions.of("delete_record") == []

        await _click_row(bot, bot.cards(ts)[0], "all", APPROVE_ALL_ACTION, user="U3")

        assert executions.of("delete_record") == [{"id": "4"}]  # 3 and 5 need one more
        [card] = bot.cards(ts)
        assert "1 of 2 approvals: <@U3>" in json.dumps(card.blocks[1])  # both rows: said once
        assert "Approved by <@U2> and <@U3>" in json.dumps(card.blocks)


async def test_decide_many_through_the_api_draws_the_batch_card_again(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent(STEP, executions)
    env = {"API_TOKEN": "api-secret", "API_TOKEN_ACTS_FOR_USERS": "true"}
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        answer = await bot.http.post(
            "/api/agents/ops/decide-many",
            json={
                "runId": _run(bot),
                "decisions": [
                    {"toolCallId": "call_3", "decision": "approve"},
                    {"toolCallId": "call_5", "decision": "decline", "reason": "keep 5"},
                ],
                "decidedBy": "U7",
            },
            headers={"Authorization": "Bearer api-secret"},
        )
        assert answer.status == 200, await answer.text()
        await bot.settle()

        [card] = bot.cards(ts)
        text = json.dumps(card.blocks)
        assert "Approved by <@U7>" in text and "Declined by <@U7>" in text and "keep 5" in text
        assert _live(card).count(APPROVE_ACTION) == 1  # call 4 still waits
        assert executions.of("delete_record") == [{"id": "3"}]


async def test_the_expiry_sweep_flips_every_row_and_leaves_no_live_button(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()

        assert await sweep_expired(bot.services, now=utcnow() + timedelta(days=2)) == 3
        await bot.settle()

        [card] = bot.cards(ts)
        assert _live(card) == [] and json.dumps(card.blocks).count("Expired") == 3
        assert executions.of("delete_record") == []


async def test_a_decision_from_home_draws_the_batch_card_again(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        await bot.open_home("U2")

        await bot.click_home(f"{HOME_BLOCK_PREFIX}0", APPROVE_ACTION, user="U2")
        await bot.settle()

        assert len(executions.of("delete_record")) == 1
        [card] = bot.cards(ts)
        assert _live(card).count(APPROVE_ACTION) == 2
        assert "Approved by <@U2>" in json.dumps(card.blocks)


async def test_a_rows_menu_declines_withdraws_and_shows_its_call_as_the_calls_own_buttons(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)

        assert (await bot.choose(card, 1, "withdraw", user="U2")).status == 200  # not theirs
        await bot.settle()
        [refused] = bot.slack.calls_to("chat.postEphemeral")
        assert refused["user"] == "U2" and "Only the person who asked" in refused["text"]

        await bot.choose(card, 1, "withdraw", user="U1")  # the requester's own call
        await bot.settle()
        await bot.choose(card, 2, "decline", user="U2")  # the decline modal, as its button
        await bot.settle()
        [modal] = bot.opened_views()
        assert modal["callback_id"] == "approval:decline-modal"
        values = {"reason": {"value": {"type": "plain_text_input", "value": "keep 4"}}}
        await bot.submit(modal, values, user="U2")
        await bot.settle()

        [card] = bot.cards(ts)
        text = json.dumps(card.blocks)
        assert "Withdrawn by <@U1>" in text and "Declined by <@U2>" in text and "keep 4" in text
        assert _live(card) == [APPROVE_ACTION, APPROVE_ALL_ACTION, DECLINE_ALL_ACTION]
        labels = [
            e["text"]["text"] for b in card.blocks if b["type"] == "actions" for e in b["elements"]
        ]
        assert labels == ["Approve all 1", "Decline all 1"]
        assert executions.of("delete_record") == []


async def test_a_stale_rows_menu_decides_nothing(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        menu = next(b for b in card.blocks if b.get("block_id") == "approval-actions:1")
        for option in menu["accessory"]["options"]:  # the row showed other arguments
            value = json.loads(option["value"])
            option["value"] = json.dumps({**value, "f": "0" * 16}, separators=(",", ":"))

        assert (await bot.choose(card, 1, "approve", user="U2")).status == 200
        await bot.settle()

        [note] = bot.slack.calls_to("chat.postEphemeral")
        assert note["user"] == "U2" and "changed since" in note["text"]
        assert executions.of("delete_record") == []


async def test_a_batch_card_whose_records_were_lost_stays_one_card(
    bot_with: BotFactory, store: Storage, executions: Executions
) -> None:
    """Found in a fault run: a batch card posted, its records lost (storage failed, a process
    died), became a second, single card per call 30 s later. Found in its thread, it is
    recorded again as the one batch card, and "Approve all" on it decides every call."""
    from bot.background import sweep
    from bot.slack.delivery._card_posts import LOST_AFTER_SECONDS, make_kept_card
    from bot.slack.delivery._outbox import flush_outbox

    async with bot_with(STEP) as (bot, _):
        ts = await bot.mention("delete records 3, 4 and 5", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        run = _run(bot)
        for n in (3, 4, 5):
            assert await store.delete_card(run, f"call_{n}")
        later = utcnow() + timedelta(seconds=LOST_AFTER_SECONDS + 1)
        await sweep(bot.services, now=later)
        await flush_outbox(bot.services, make_kept_card)
        assert bot.cards(ts) == [card]  # no single cards for the same calls
        for n in (3, 4, 5):
            posted = await bot.services.cards.find(run, f"call_{n}")
            assert posted is not None and posted.ts == card.ts
            assert posted.batch == ("call_3", "call_4", "call_5")
        await _click_row(bot, card, "all", APPROVE_ALL_ACTION, user="U2")
        assert sorted(c["id"] for c in executions.of("delete_record")) == ["3", "4", "5"]
        [card] = bot.cards(ts)
        assert _live(card) == []
