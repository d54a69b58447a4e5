"""The local workspace as three people use it (SPEC 10), without a browser: the demo's
two-person refund rule completes, each person's modals stay theirs and a modal of a decided call
is dropped, the loser of a race is told who won, and the page knows the emoji the bot uses."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import bot.slack._ids as ids
from bot import APPROVE_ACTION, DECLINE_ACTION
from bot.local._workspace import DECIDING_ACTIONS
from tests.bot.local.fixtures import ALEX, ROBIN, SAM, Local, local_workspace, texts

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
async def local() -> AsyncIterator[Local]:
    async with local_workspace() as started:
        yield started


async def test_three_people_complete_the_demos_two_person_refund_rule(local: Local) -> None:
    assert [p["name"] for p in (await local.state())["people"]] == ["alex", "sam", "robin"]
    ts = await local.say("refund order 48 for 1100", user=ALEX)
    card = await local.card(ts)
    await local.click(card, APPROVE_ACTION, user=SAM)
    assert "1 of 2 approvals" in texts([await local.card(ts)])
    assert "Refunded" not in texts(await local.thread(ts))
    await local.click(await local.card(ts), APPROVE_ACTION, user=ROBIN)
    decided = await local.card(ts)
    assert decided["blocks"][0]["text"]["text"].startswith("✅ Approved")
    assert "<@U0ROBIN>" in texts([decided])
    assert "Refunded 1,100.00 on order 48" in texts(await local.thread(ts))


async def test_the_loser_of_a_double_approval_is_told_who_won_not_that_the_page_was_stale(
    local: Local,
) -> None:
    ts = await local.say("delete record 42", user=ALEX)
    shown = await local.card(ts)  # both pages show the pending card
    await local.click_shown(shown, APPROVE_ACTION, user=SAM)
    late = await local.click_shown(shown, APPROVE_ACTION, user=ROBIN)  # the card changed since
    assert late["ok"]
    notes = [m for m in (await local.state(ROBIN))["messages"] if m["ephemeral"]]
    assert len(notes) == 1 and "already approved by <@U0SAM>" in notes[0]["text"]
    assert texts(await local.thread(ts)).count("Done: record 42") == 1


async def test_a_click_on_a_button_never_shown_is_still_refused(local: Local) -> None:
    ts = await local.say("delete record 42", user=ALEX)
    card = await local.card(ts)
    body = {"user": SAM, "ts": card["ts"], "action_id": APPROVE_ACTION, "value": "{}"}
    async with local.http.post(f"{local.url}/_local/actions", json=body) as response:
        assert response.status == 404  # the card never had it (it was not edited since)


async def test_a_modal_stays_with_its_person_and_is_dropped_once_its_call_is_decided(
    local: Local,
) -> None:
    ts = await local.say("delete record 7", user=ALEX)
    await local.click(await local.card(ts), DECLINE_ACTION, user=SAM)  # the reason modal
    [modal] = (await local.state(SAM))["views"]
    assert (await local.state(ROBIN))["views"] == [] and (await local.state(ALEX))["views"] == []
    await local.click(await local.card(ts), APPROVE_ACTION, user=ROBIN)
    assert (await local.card(ts))["blocks"][0]["text"]["text"].startswith("✅ Approved")
    assert (await local.state(SAM))["views"] == []  # and a reload (a fresh state) agrees
    assert modal["id"] not in local.workspace.views


async def test_a_modal_of_a_call_still_pending_is_kept(local: Local) -> None:
    first = await local.say("delete record 7", user=ALEX)
    second = await local.say("delete record 8", user=ALEX)
    await local.click(await local.card(first), DECLINE_ACTION, user=SAM)
    await local.click(await local.card(second), APPROVE_ACTION, user=ROBIN)
    assert len((await local.state(SAM))["views"]) == 1


def test_the_deciding_action_ids_are_the_bots() -> None:
    bots = {ids.APPROVE_ACTION, ids.DECLINE_ACTION, ids.EDIT_ACTION, ids.PROVIDE_ACTION}
    assert bots | {ids.ROW_ACTION} == set(DECIDING_ACTIONS)  # and a batch row's ⋯ menu


def _emoji_table() -> set[str]:
    script = (ROOT / "bot/local/static/blockkit.js").read_text()
    table = script[script.index("const EMOJI = {") : script.index("};")]
    return set(re.findall(r"(\w+): \"", table))


def test_the_page_renders_every_shortcode_the_bot_writes() -> None:
    used = set()
    for path in (ROOT / "bot").rglob("*.py"):
        used |= set(re.findall(r"(?<![\w:]):([a-z][a-z0-9_+-]*):(?![\w:])", path.read_text()))
    used -= {"active"}  # Prometheus / docs words between colons, not emoji
    assert used, "no shortcode found: the pattern is wrong"
    assert used <= _emoji_table(), used - _emoji_table()
