"""Issue 26 in a real browser (headless Debian Chromium, screenshots under ``tmp_path``): Home
rows that can be told apart by their arguments, three people completing the demo's two-person
refund rule, modals that stay with their person and leave once their call is decided, emoji
instead of shortcodes, and the loser of a race between two tabs told who won."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Page, Route, expect

from bot import APPROVE_ACTION, DECLINE_ACTION
from tests.bot.local.browser import act_as, ask, browser, click, opened
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "opened"]  # fixtures

BUTTONS = "button[data-action-id]"
SHORTCODE = re.compile(r":[a-z][a-z0-9_+-]*:")
"""A Slack emoji shortcode left as text."""
NAMES = {"U0ALEX": "alex", "U0SAM": "sam", "U0ROBIN": "robin"}


async def test_home_rows_show_their_arguments_so_two_deletes_can_be_told_apart(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    for record in ("3", "4"):
        thread = await ask(page, f"delete record {record}")
        await expect(thread.get_by_test_id("card").locator(BUTTONS)).to_have_count(5)
    await act_as(page, "sam")
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await expect(home.locator(".block.fields")).to_have_count(2)
    await expect(home.locator(".block.fields")).to_have_text(
        [re.compile(r"id\s*4"), re.compile(r"id\s*3")]
    )
    await expect(home.locator(".block.actions")).to_have_count(2)
    await expect(home).not_to_contain_text(SHORTCODE)
    await page.screenshot(path=tmp_path / "home-arguments.png")

    await (
        home.locator(".block.actions").first.locator(f'[data-action-id="{APPROVE_ACTION}"]').click()
    )
    await expect(home.locator(".block.fields")).to_have_text([re.compile(r"id\s*3")])
    await (
        home.locator(".block.actions").first.locator(f'[data-action-id="{APPROVE_ACTION}"]').click()
    )
    await expect(home).to_contain_text("✨ Nothing is waiting for you.")
    await expect(home).not_to_contain_text(SHORTCODE)


async def test_three_people_complete_the_two_person_refund_and_the_card_names_its_approvers(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    thread = await ask(page, "refund order 48 for 1100")
    card = thread.get_by_test_id("card")
    await expect(card.locator(BUTTONS).first).to_be_visible()
    await act_as(page, "sam")
    await click(page, card, APPROVE_ACTION)
    await expect(card).to_contain_text("1 of 2 approvals: @sam")
    await page.screenshot(path=tmp_path / "refund-one-of-two.png")
    await act_as(page, "robin")
    await click(page, card, APPROVE_ACTION)
    await expect(card.locator(".block.header")).to_contain_text("✅ Approved")
    await expect(card.locator(BUTTONS)).to_have_count(0)
    await expect(thread).to_contain_text("Refunded 1,100.00 on order 48")
    await expect(card).not_to_contain_text(SHORTCODE)
    await card.screenshot(path=tmp_path / "refund-approved.png")

    await expect(card).to_contain_text(re.compile(r"Approved by @sam and @robin\b"))  # in order
    await expect(card).to_contain_text("2 of 2 approvals")
    await expect(card).not_to_contain_text("<@")
    [decided] = [m for m in local.workspace.messages.values() if "Approved" in str(m.blocks)]
    named = [NAMES[u] for u in re.findall(r"<@(U0[A-Z]+)>", str(decided.blocks)) if u in NAMES]
    assert named[:2] == ["sam", "robin"]


async def test_a_modal_stays_with_its_person_and_goes_once_its_call_is_decided(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "delete record 7")
    card = thread.get_by_test_id("card")
    await act_as(page, "sam")
    await click(page, card, DECLINE_ACTION)
    modal = page.get_by_test_id("modal")
    await expect(modal).to_be_visible()
    await act_as(page, "robin")
    await expect(modal).to_have_count(0)  # sam's modal is not robin's
    await page.screenshot(path=tmp_path / "robin-without-sams-modal.png")
    await act_as(page, "sam")
    await expect(modal).to_be_visible()
    await act_as(page, "robin")
    await click(page, card, APPROVE_ACTION)
    await expect(card.locator(".block.header")).to_contain_text("✅ Approved")
    await act_as(page, "sam")
    await expect(card.locator(".block.header")).to_contain_text("✅ Approved")
    await expect(modal).to_have_count(0)  # its call was decided
    await page.reload()
    await expect(page.get_by_test_id("model")).to_have_text("offline demo model")
    await expect(page.get_by_test_id("messages")).to_contain_text("delete record 7")
    await expect(modal).to_have_count(0)  # and it does not come back


async def test_two_tabs_approving_one_card_the_loser_is_told_who_won(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, first = opened
    thread = await ask(first, "delete record 9")
    await act_as(first, "sam")
    second = await first.context.new_page()
    await second.goto(f"{local.url}/#thread={await thread.get_attribute('data-ts')}")
    await act_as(second, "robin")
    stale = second.locator(
        f'.message[data-testid="card"] {BUTTONS}[data-action-id="{APPROVE_ACTION}"]'
    )
    await expect(stale.first).to_be_visible()

    async def offline(route: Route) -> None:
        await route.abort()

    await second.route("**/_local/state*", offline)  # the second tab stops refreshing
    await click(first, thread.get_by_test_id("card"), APPROVE_ACTION)
    await expect(thread.get_by_test_id("card").locator(".block.header")).to_contain_text("✅")
    await stale.first.click()  # still shown there: the click reaches the bot
    await second.unroute("**/_local/state*", offline)
    notice = second.get_by_test_id("notice")
    await expect(notice).to_contain_text("already approved by @sam")
    await expect(notice).not_to_contain_text("stale")
    await second.screenshot(path=tmp_path / "loser-told.png")
    await second.close()
