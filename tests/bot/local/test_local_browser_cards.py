"""SPEC 12 cards and the Home tab as a person sees them in the local workspace: headless
Chromium takes a screenshot of each state (under the test's ``tmp_path``) and the test checks
what the person would look for: the header, the buttons there or gone, the confirm dialog, the
hint on one's own request, nothing wider than a 420 px window.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from bot import APPROVE_ACTION, DECLINE_ACTION
from bot.background._periodic import sweep_expired
from storage import utcnow
from tests.bot.local.browser import act_as, ask, browser, click, narrow, opened, overflow_x
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "narrow", "opened"]  # fixtures

BUTTONS = "button[data-action-id]"
TITLE = "Delete a record"  # the tool's title (SPEC 2), never its description
"""The delete tool's card title (its description: it has no ``title``)."""
TITLE_PENDING = f"Approve {TITLE}?"


async def _card(page: Page, request: str) -> tuple[Locator, Locator]:
    """Ask for ``request``; the thread pane and its pending card."""
    thread = await ask(page, request)
    card = thread.get_by_test_id("card")
    await expect(card.locator(".block.header")).to_have_text(TITLE_PENDING)
    return thread, card


async def test_a_pending_card_has_its_header_fields_buttons_and_tells_the_requester_who_decides(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    _, card = await _card(page, "delete record 42")
    await expect(card.locator(".block.fields")).to_contain_text("42")
    why, requested = card.locator(".block.context").first, card.locator(".block.context").last
    await expect(why).to_contain_text("Why it waits")  # the rule, in words
    await expect(requested).to_contain_text("Requested by @alex")
    await expect(card.locator(BUTTONS)).to_have_text(
        ["Approve", "Approve and allow…", "Edit", "Decline", "Withdraw"]  # the demo rule: grants
    )
    hint = card.locator(".self-hint")
    await expect(hint).to_contain_text("can’t approve it yourself")
    await expect(hint).to_contain_text("switch “acting as” (at the top) to sam")
    await card.screenshot(path=tmp_path / "pending.png")

    await act_as(page, "sam")
    await expect(hint).to_have_count(0)
    await expect(card.locator(BUTTONS)).to_have_count(5)


async def test_an_approved_card_at_420px_says_so_in_its_header_and_loses_its_buttons(
    narrow: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = narrow
    thread, card = await _card(page, "delete record 42")
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "pending-420.png")
    await act_as(page, "sam")
    await click(page, card, APPROVE_ACTION)
    await expect(card.locator(".block.header")).to_have_text("✅ Approved: " + TITLE)
    await expect(card.locator(BUTTONS)).to_have_count(0)
    await expect(card).to_contain_text("Approved by @sam")
    await expect(thread).to_contain_text("Done: record 42 (Acme Corp #42) was deleted.")
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "approved-420.png")


async def test_a_declined_card_says_so_in_its_header_and_loses_its_buttons(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread, card = await _card(page, "delete record 7")
    await act_as(page, "sam")
    await click(page, card, DECLINE_ACTION)
    modal = page.get_by_test_id("modal")
    await modal.locator("textarea, input").first.fill("not this one")
    await modal.locator('[data-role="submit"]').click()
    await expect(modal).to_have_count(0)
    await expect(card.locator(".block.header")).to_have_text("🚫 Declined: " + TITLE)
    await expect(card.locator(BUTTONS)).to_have_count(0)
    await expect(card).to_contain_text("not this one")
    await expect(thread).to_contain_text("it was declined")
    await card.screenshot(path=tmp_path / "declined.png")


async def test_an_expired_card_says_so_in_its_header_and_offers_only_ask_again(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    _, card = await _card(page, "delete record 9")
    assert await sweep_expired(local.services, now=utcnow() + timedelta(days=2)) == 1
    await local.settle()
    await expect(card.locator(".block.header")).to_have_text("⌛ Expired: " + TITLE)
    await expect(card.locator(BUTTONS)).to_have_text(["Ask again"])  # for its requester
    await card.screenshot(path=tmp_path / "expired.png")


async def test_a_card_that_did_not_change_keeps_its_node_while_the_workspace_changes(
    opened: tuple[Local, Page],
) -> None:
    """The page redraws on any change; an unchanged card keeps its node (what the person is
    looking at, a screenshot being taken, an open select), only a changed one is redrawn."""
    local, page = opened
    thread, card = await _card(page, "delete record 11")
    held = await card.element_handle()
    await page.get_by_test_id("thread-composer").fill("and what about record 12?")
    await page.get_by_test_id("thread-composer").press("Enter")
    await expect(thread).to_contain_text("and what about record 12?")
    await local.settle()
    assert await held.evaluate("node => node.isConnected")

    await act_as(page, "sam")
    await click(page, card, APPROVE_ACTION)
    await expect(card.locator(".block.header")).to_have_text("✅ Approved: " + TITLE)
    assert not await held.evaluate("node => node.isConnected")


async def test_approve_with_a_confirm_dialog_sends_nothing_until_confirmed(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "refund order 7 for 2500")
    card = thread.get_by_test_id("card")
    await expect(card.locator(".block.header")).to_contain_text("Approve")
    await act_as(page, "sam")
    await card.locator(f'button[data-action-id="{APPROVE_ACTION}"]').click()
    confirm = page.get_by_test_id("confirm")
    await expect(confirm.locator(".title")).to_have_text("Are you sure?")
    await expect(confirm).to_contain_text("It cannot be undone.")
    await expect(confirm.locator("button")).to_have_text(["Cancel", "Approve"])
    await page.screenshot(path=tmp_path / "confirm.png")

    await confirm.locator('[data-role="deny"]').click()
    await expect(confirm).to_have_count(0)
    await expect(card.locator(BUTTONS)).to_have_count(5)  # Approve, Edit, Decline, Withdraw, Extend
    await expect(card).not_to_contain_text("1 of 2 approvals: @sam")

    await click(page, card, APPROVE_ACTION)
    await expect(card).to_contain_text("1 of 2 approvals: @sam")


async def test_the_home_tab_lists_what_waits_and_its_approve_decides_the_card(
    narrow: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = narrow
    thread, card = await _card(page, "delete record 3")
    await act_as(page, "sam")
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await expect(home.locator(".block.header")).to_have_text(
        ["Waiting for you", "Your active grants"]
    )
    await expect(home).to_contain_text("Delete a record")
    await expect(home).to_contain_text("requested by @alex")
    await expect(home.locator(BUTTONS)).to_have_text(
        ["Approve", "Approve and allow…", "Edit", "Decline", "Withdraw"]
    )
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "home-420.png")

    await home.locator(f'button[data-action-id="{APPROVE_ACTION}"]').click()
    await expect(home).to_contain_text("Nothing is waiting for you.")
    await page.get_by_test_id("channel-link").click()
    await expect(card.locator(".block.header")).to_have_text("✅ Approved: " + TITLE)
    await expect(thread).to_contain_text("Done: record 3")


async def test_the_home_link_opens_the_cards_thread(opened: tuple[Local, Page]) -> None:
    _, page = opened
    await _card(page, "delete record 4")
    await page.get_by_test_id("thread").locator("#thread-close").click()
    await act_as(page, "sam")
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await home.get_by_role("link", name="open the thread").click()
    thread = page.get_by_test_id("thread")
    await expect(thread).to_be_visible()
    await expect(thread.get_by_test_id("card").locator(".block.header")).to_contain_text("record")
