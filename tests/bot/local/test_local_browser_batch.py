"""SPEC 12 batch cards as a person sees them in the local workspace: "delete records 3, 4 and
5" (the demo model's three calls in one step) comes as ONE card, one line per call with its
arguments and its own ⋯ menu under "Approve all 3" / "Decline all 3"; one row approved from its
menu, then "Approve all 2" decides the rest. Ten calls stay readable. Headless Chromium takes a
screenshot of each state (under the test's ``tmp_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from bot.slack._ids import APPROVE_ALL_ACTION, DECLINE_ALL_ACTION, ROW_ACTION, WITHDRAW_ACTION
from tests.bot.local.browser import act_as, ask, browser, narrow, opened, overflow_x
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "narrow", "opened"]  # fixtures

BUTTONS = "button[data-action-id]"
MENUS = f'button[data-action-id="{ROW_ACTION}"]'


async def choose(page: Page, card: Locator, row: int, option: str) -> None:
    """Open row ``row``'s ⋯ menu (from 0) and pick ``option``, confirming if asked."""
    menu = card.locator(".overflow").nth(row)
    await menu.locator(MENUS).click()
    await menu.get_by_test_id("menu-option").filter(has_text=option).first.click()
    confirm = page.get_by_test_id("confirm")
    if await confirm.count():
        await confirm.locator('[data-role="confirm"]').click()


async def test_a_batch_card_lists_every_call_on_a_line_and_approve_all_decides_them(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "delete records 3, 4 and 5")
    cards = thread.get_by_test_id("card")
    await expect(cards).to_have_count(1)
    card = cards.first
    await expect(card.locator(".block.header")).to_have_text("Approve 3 calls?")
    rows = await card.locator(".section.with-menu .text").all_inner_texts()
    assert rows == [
        f"{n}. Delete a record · delete-record · id {r}" for n, r in ((1, 3), (2, 4), (3, 5))
    ]
    await expect(card.locator(MENUS)).to_have_count(3)  # one ⋯ per row, no row of buttons
    await expect(card.locator(f'button[data-action-id="{WITHDRAW_ACTION}"]')).to_have_count(0)
    await expect(card.locator(f'button[data-action-id="{APPROVE_ALL_ACTION}"]')).to_have_text(
        "Approve all 3"
    )
    await expect(card.locator(f'button[data-action-id="{DECLINE_ALL_ACTION}"]')).to_have_text(
        "Decline all 3"
    )
    await card.screenshot(path=tmp_path / "batch-pending.png")
    menu = card.locator(".overflow").nth(1)
    await menu.locator(MENUS).click()
    await expect(menu.get_by_test_id("menu-option")).to_have_text(
        ["Approve", "Approve and allow…", "Edit…", "Decline…", "Withdraw (requester only)"]
    )
    await card.screenshot(path=tmp_path / "batch-menu.png")
    await menu.locator(MENUS).click()  # closed again

    await act_as(page, "sam")
    await choose(page, card, 1, "Approve")
    await expect(card).to_contain_text("Approved by @sam")
    await expect(card.locator(MENUS)).to_have_count(2)
    await expect(card.locator(f'button[data-action-id="{APPROVE_ALL_ACTION}"]')).to_have_text(
        "Approve all 2"
    )
    await card.screenshot(path=tmp_path / "batch-one-approved.png")

    await act_as(page, "robin")
    await card.locator(f'button[data-action-id="{APPROVE_ALL_ACTION}"]').click()
    confirm = page.get_by_test_id("confirm")
    await expect(confirm).to_contain_text("Approve all 2 calls")
    await confirm.locator('[data-role="confirm"]').click()

    await expect(card.locator(".block.header")).to_have_text("All 3 calls decided")
    await expect(card.locator(BUTTONS)).to_have_count(0)
    await expect(card).to_contain_text("Approved by @robin")
    for n in (3, 4, 5):
        await expect(thread).to_contain_text(f"Done: record {n}")
    await card.screenshot(path=tmp_path / "batch-decided.png")


async def test_ten_calls_on_one_card_stay_readable(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "delete records 11, 12, 13, 14, 15, 16, 17, 18, 19 and 20")
    card = thread.get_by_test_id("card").first
    await expect(card.locator(".block.header")).to_have_text("Approve 10 calls?")
    await expect(card.locator(MENUS)).to_have_count(10)
    await expect(card.locator(BUTTONS)).to_have_count(12)  # Approve all, Decline all, ten ⋯
    heights = [
        box["height"]
        for box in [await r.bounding_box() for r in await card.locator(".section.with-menu").all()]
        if box
    ]
    assert max(heights) < 60  # one line a call
    await card.screenshot(path=tmp_path / "batch-ten.png")


async def test_a_batch_card_fits_a_420px_window(narrow: tuple[Local, Page], tmp_path: Path) -> None:
    _, page = narrow
    thread = await ask(page, "delete records 6, 7 and 8")
    card = thread.get_by_test_id("card").first
    await expect(card.locator(".block.header")).to_have_text("Approve 3 calls?")
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "batch-420.png")
