"""App Home "Waiting for you": the pending approvals the viewer may decide, across threads,
newest first, with a link to each thread and the card's own buttons (same listener, same claim)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from agents.models import ScriptItem, call, reply
from bot.slack._ids import APPROVE_ACTION, CARD_ACTIONS, DECLINE_ACTION
from bot.slack.blocks._home_view import HOME_BLOCK_PREFIX, HOME_ITEMS
from storage import Storage
from tests.bot.harness import CHANNEL, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

GATED: list[ScriptItem] = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]
FIRST = f"{HOME_BLOCK_PREFIX}0"


@asynccontextmanager
async def served(
    slack: FakeSlackAPI,
    store: Storage,
    executions: Executions,
    script: list[ScriptItem] = GATED,
    **env: str,
) -> AsyncIterator[Bot]:
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        yield bot


def _valid(view: dict[str, Any]) -> dict[str, Any]:
    assert view["type"] == "home"
    assert len(view["blocks"]) <= 100
    View(**view).validate_json()
    for raw in view["blocks"]:
        parsed = Block.parse(raw)
        assert parsed is not None
        parsed.validate_json()
    return view


def _text(view: dict[str, Any]) -> str:
    return repr(view["blocks"])


def _buttons(view: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (b["block_id"], e["action_id"])
        for b in view["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    ]


async def test_home_lists_pending_approvals_newest_first_with_links_and_the_cards_buttons(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    two = [call("delete_record", {"id": "abc-123"}), call("delete_record", {"id": "def-456"})]
    async with served(slack, store, executions, two) as bot:
        older = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        newer = await bot.mention("delete abc-123 again", user="U1")
        await bot.settle()
        view = _valid(await bot.open_home("U2"))
        [old_card], [new_card] = bot.cards(older), bot.cards(newer)
        assert view["blocks"][0]["text"]["text"] == "Waiting for you"
        assert [a for _, a in _buttons(view)] == list(CARD_ACTIONS) * 2
        sections = [b["text"]["text"] for b in view["blocks"] if b["type"] == "section"]
        assert new_card.ts.replace(".", "") in sections[0]  # newest first, linked to its card
        assert old_card.ts.replace(".", "") in sections[1]
        assert "<@U1>" in sections[0] and "open the thread" in sections[0]
        [card_actions] = [b for b in new_card.blocks if b["type"] == "actions"]
        [home_actions] = [b for b in view["blocks"] if b.get("block_id") == FIRST]
        assert home_actions["elements"] == card_actions["elements"]  # same ids, values, confirm


async def test_home_lists_only_what_the_viewer_may_approve(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, APPROVERS="U5") as bot:
        await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        assert _buttons(_valid(await bot.open_home("U5")))
        outsider = _valid(await bot.open_home("U2"))
        assert not _buttons(outsider)
        assert "Nothing is waiting for you" in _text(outsider)
        requester = _valid(await bot.open_home("U1"))  # no self-approval by default
        assert not _buttons(requester)


async def test_approve_from_home_runs_once_updates_the_card_and_republishes_home(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        stale = await bot.open_home("U2")
        response = await bot.click_home(FIRST, APPROVE_ACTION, user="U2")
        assert response.status == 200
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        [card] = bot.cards(ts)
        assert card.blocks[0]["type"] == "header"
        assert "Approved" in card.blocks[0]["text"]["text"]
        assert not [b for b in card.blocks if b["type"] == "actions"]
        assert "Deleted abc-123." in bot.texts(ts)
        home = _valid(slack.homes["U2"])
        assert not _buttons(home) and "Nothing is waiting for you" in _text(home)
        slack.homes["U2"] = stale  # a second click on a view not yet refreshed
        again = await bot.click_home(FIRST, APPROVE_ACTION, user="U2")
        assert again.status == 200
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        [told] = slack.calls_to("chat.postEphemeral")
        assert told["user"] == "U2" and "already approved" in told["text"]
        assert not _buttons(slack.homes["U2"])


async def test_a_decision_in_the_thread_republishes_every_open_home(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        assert _buttons(await bot.open_home("U3"))
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert not _buttons(_valid(slack.homes["U3"]))


async def test_decline_from_home_opens_the_modal_and_declines_the_card_in_its_thread(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        await bot.open_home("U2")
        await bot.click_home(FIRST, DECLINE_ACTION, user="U2")
        await bot.settle()
        [modal] = bot.opened_views()
        values = {"reason": {"value": {"type": "plain_text_input", "value": "not today"}}}
        assert (await bot.submit(modal, values, user="U2")).status == 200
        await bot.settle()
        [card] = bot.cards(ts)
        assert "Declined" in card.blocks[0]["text"]["text"]
        assert executions.of("delete_record") == []
        assert card.channel == CHANNEL
        assert not _buttons(slack.homes["U2"])


async def test_each_row_shows_its_arguments_so_two_calls_of_one_tool_can_be_told_apart(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    two = [call("delete_record", {"id": "abc-123"}), call("delete_record", {"id": "def-456"})]
    async with served(slack, store, executions, two) as bot:
        await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        await bot.mention("delete def-456", user="U1")
        await bot.settle()
        view = _valid(await bot.open_home("U2"))
        rows = [b for b in view["blocks"] if b["type"] == "section" and b.get("fields")]
        shown = [[f["text"] for f in row["fields"]] for row in rows]
        assert shown == [["*id*\n`def-456`"], ["*id*\n`abc-123`"]]  # newest first


async def test_long_arguments_are_a_code_block_cut_to_fit_and_marked_as_cut(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    long = [call("delete_record", {"id": "x" * 5000}), reply("Deleted.")]
    async with served(slack, store, executions, long) as bot:
        await bot.mention("delete a long one", user="U1")
        await bot.settle()
        view = _valid(await bot.open_home("U2"))
        [row] = [b for b in view["blocks"] if b["type"] == "section" and "```" in str(b)]
        assert "xxxx" in row["text"]["text"] and len(row["text"]["text"]) < 1000
        assert "cut to fit" in row["text"]["text"]


async def test_publishing_makes_no_slack_call_per_row_and_links_are_built_from_the_team_url(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    many = [call("delete_record", {"id": f"r{n}"}) for n in range(5)]
    async with served(slack, store, executions, many) as bot:
        threads = []
        for n in range(5):
            threads.append(await bot.mention(f"delete r{n}", user="U1"))
            await bot.settle()
        await bot.open_home("U3")  # the workspace URL is read (at most) once, here
        for viewer in ("U2", "U4"):
            await bot.open_home(viewer)
        before = len(slack.calls)
        view = _valid(await bot.open_home("U2"))
        during = [c.method for c in slack.calls[before:]]
        assert during == ["views.publish"]  # five rows, one call
        assert slack.calls_to("chat.getPermalink") == []
        assert len(slack.calls_to("auth.test")) <= 2  # bolt's own, and the URL's
        sections = [b["text"]["text"] for b in view["blocks"] if b["type"] == "section"]
        [card] = bot.cards(threads[-1])
        link = (
            f"https://test.slack.com/archives/{CHANNEL}/p{card.ts.replace('.', '')}"
            f"?thread_ts={threads[-1]}&cid={CHANNEL}|open the thread"
        )
        assert link in sections[0]

        before = len(slack.calls)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        publishes = [c for c in slack.calls[before:] if c.method == "views.publish"]
        assert sorted(c.args["user_id"] for c in publishes) == ["U2", "U3", "U4"]
        assert slack.calls_to("chat.getPermalink") == []


async def test_more_than_the_view_holds_lists_the_newest_and_says_older_ones_wait(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    many = [call("delete_record", {"id": f"r{n}"}) for n in range(HOME_ITEMS + 2)]
    async with served(slack, store, executions, many) as bot:
        for n in range(HOME_ITEMS + 2):
            await bot.mention(f"delete r{n}", user="U1")
            await bot.settle()
        view = _valid(await bot.open_home("U2"))
        rows = [b for b in view["blocks"] if b["type"] == "section" and b.get("fields")]
        assert len(rows) == HOME_ITEMS
        assert rows[0]["fields"][0]["text"] == f"*id*\n`r{HOME_ITEMS + 1}`"  # the newest
        assert rows[-1]["fields"][0]["text"] == "*id*\n`r2`"  # the two oldest are left out
        assert "Older requests are not listed here" in _text(view)
