"""The Home tab lists every pending call the viewer may decide, also those never shown as a card:
a run started outside Slack (through the API or a script: in no Slack thread) and a call whose
card was never posted. Each row has its arguments and the card's buttons; a click decides it."""

from __future__ import annotations

from typing import Any

from agents.models import call, reply
from bot.slack._ids import APPROVE_ACTION, CARD_ACTIONS, DECLINE_ACTION, EDIT_ACTION
from bot.slack.blocks._blocks import CardView
from bot.slack.blocks._home_view import HOME_BLOCK_LIMIT, HOME_ITEMS, Waiting, home_view
from bot.slack.blocks._refs import ApprovalRef
from storage import Storage
from tests.bot.harness import CHANNEL, TEAM, Bot, Executions, next_ts
from tests.bot.slack.test_home import FIRST, _buttons, _valid, served
from tests.fakes.slack_api import FakeSlackAPI

SCRIPT = [call("delete_record", {"id": "api-7"}), reply("Deleted api-7.")]


def _rows(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in view["blocks"] if b["type"] == "section" and b.get("fields")]


async def _started_outside_slack(bot: Bot, thread_id: str = "api:ticket-7") -> str:
    result = await bot.agent.generate("delete api-7", thread_id=thread_id, requested_by="U1")
    assert result.finish_reason == "suspended"
    await bot.settle()
    return result.run_id


async def test_a_call_in_no_slack_thread_is_listed_with_its_arguments_and_buttons(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, SCRIPT) as bot:
        await _started_outside_slack(bot)
        assert slack.calls_to("chat.postMessage") == []  # never shown as a card
        view = _valid(await bot.open_home("U2"))
        [row] = _rows(view)
        assert [f["text"] for f in row["fields"]] == ["*id*\n`api-7`"]
        assert "in no Slack thread" in row["text"]["text"] and "<@U1>" in row["text"]["text"]
        assert [a for _, a in _buttons(view)] == list(CARD_ACTIONS)


async def test_approve_from_home_decides_a_call_in_no_thread_and_says_so_on_the_home_tab(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, SCRIPT) as bot:
        run_id = await _started_outside_slack(bot)
        stale = await bot.open_home("U2")
        assert (await bot.click_home(FIRST, APPROVE_ACTION, user="U2")).status == 200
        await bot.settle()
        await bot.agent.drain()
        assert executions.of("delete_record") == [{"id": "api-7"}]
        assert await bot.agent.pending_call(run_id=run_id, tool_call_id="call-1") is None
        home = _valid(slack.homes["U2"])
        assert not _buttons(home)
        assert "You approved `delete_record`: recorded" in repr(home["blocks"])
        assert slack.calls_to("chat.postMessage") == []  # no thread to post in
        slack.homes["U2"] = stale  # a second click on a view not yet refreshed
        await bot.click_home(FIRST, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "api-7"}]
        assert "already approved" in repr(slack.homes["U2"]["blocks"])
        assert slack.calls_to("chat.postEphemeral") == []
        await bot.open_home("U2")  # opened anew: the note was seen
        assert "recorded" not in repr(slack.homes["U2"]["blocks"])


async def test_decline_from_home_on_a_call_in_no_thread_opens_the_modal_and_declines(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, SCRIPT) as bot:
        await _started_outside_slack(bot)
        await bot.open_home("U2")
        await bot.click_home(FIRST, DECLINE_ACTION, user="U2")
        await bot.settle()
        [modal] = bot.opened_views()
        values = {"reason": {"value": {"type": "plain_text_input", "value": "not today"}}}
        assert (await bot.submit(modal, values, user="U2")).status == 200
        await bot.settle()
        await bot.agent.drain()
        assert executions.of("delete_record") == []
        home = _valid(slack.homes["U2"])
        assert not _buttons(home) and "You declined `delete_record`" in repr(home["blocks"])


async def test_edit_from_home_on_a_call_in_no_thread_runs_the_edited_call(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, SCRIPT) as bot:
        await _started_outside_slack(bot)
        await bot.open_home("U2")
        await bot.click_home(FIRST, EDIT_ACTION, user="U2")
        await bot.settle()
        [modal] = bot.opened_views()
        values = {"field:id": {"value": {"type": "plain_text_input", "value": "api-8"}}}
        assert (await bot.submit(modal, values, user="U2")).status == 200
        await bot.settle()
        await bot.agent.drain()
        assert executions.of("delete_record") == [{"id": "api-8"}]
        assert "You approved (edited) `delete_record`" in repr(slack.homes["U2"]["blocks"])


async def test_a_call_whose_card_was_never_posted_is_listed_linked_to_its_thread_and_a_click_posts_and_decides_its_card(  # noqa: E501
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, SCRIPT) as bot:
        root = next_ts()
        await _started_outside_slack(bot, thread_id=f"slack:{TEAM}:{CHANNEL}:{root}")
        assert bot.cards(root) == []
        view = _valid(await bot.open_home("U2"))
        [row] = _rows(view)
        assert [f["text"] for f in row["fields"]] == ["*id*\n`api-7`"]
        link = f"https://test.slack.com/archives/{CHANNEL}/p{root.replace('.', '')}|open the thread"
        assert link in row["text"]["text"]
        await bot.click_home(FIRST, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "api-7"}]
        [card] = bot.cards(root)  # posted on the click, then decided: one card
        assert "Approved" in card.blocks[0]["text"]["text"]
        assert not [b for b in card.blocks if b["type"] == "actions"]
        assert "Deleted api-7." in bot.texts(root)
        assert not _buttons(slack.homes["U2"])


async def test_rows_without_a_card_cost_no_slack_call_either(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    many = [call("delete_record", {"id": f"r{n}"}) for n in range(4)]
    async with served(slack, store, executions, many) as bot:
        for n in range(4):
            where = f"api:{n}" if n % 2 else f"slack:{TEAM}:{CHANNEL}:{next_ts()}"
            await bot.agent.generate(f"delete r{n}", thread_id=where, requested_by="U1")
        await bot.settle()
        await bot.open_home("U3")  # the workspace URL is read (at most) once, here
        before = len(slack.calls)
        view = _valid(await bot.open_home("U2"))
        assert [c.method for c in slack.calls[before:]] == ["views.publish"]  # four rows
        assert len(_rows(view)) == 4 and slack.calls_to("chat.getPermalink") == []


def test_a_full_view_with_a_note_stays_within_slacks_block_limit() -> None:
    ref = ApprovalRef(run_id="r", tool_call_id="c", fingerprint="f")
    row = Waiting(card=CardView(ref=ref, tool_name="t", args={"id": "1"}), link=None)
    view = home_view([row] * (HOME_ITEMS + 3), note="You approved `t`: recorded")
    assert len(view.blocks) <= HOME_BLOCK_LIMIT
    assert view.blocks[2].to_dict()["text"]["text"] == "You approved `t`: recorded"
