"""SPEC 12 batch cards as a person sees them in the local workspace: "delete records 3, 4 and
5" (the demo model's three calls in one step) comes as ONE card listing every call with its own
buttons; one row approved, then "Approve all 2" decides the rest. Headless Chromium takes a
screenshot of each state (under the test's ``tmp_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot import APPROVE_ACTION
from bot.slack._ids import APPROVE_ALL_ACTION, DECLINE_ALL_ACTION
from tests.bot.local.browser import act_as, ask, browser, narrow, opened, overflow_x
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "narrow", "opened"]  # fixtures

BUTTONS = "button[data-action-id]"


async def test_a_batch_card_lists_every_call_and_approve_all_decides_them(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "delete records 3, 4 and 5")
    cards = thread.get_by_test_id("card")
    await expect(cards).to_have_count(1)
    card = cards.first
    await expect(card.locator(".block.header")).to_have_text("Approve 3 calls?")
    sections = await card.locator(".block.section").all_inner_texts()
    rows = [s for s in sections if "Delete a record" in s]
    assert len(rows) == 3  # every call listed, nothing behind a count
    for number, record in zip((1, 2, 3), (3, 4, 5), strict=True):
        assert rows[number - 1].startswith(f"{number}. Delete a record")
        assert f"id {record}" in rows[number - 1].replace("\n", " ")
    await expect(card.locator(f'button[data-action-id="{APPROVE_ACTION}"]')).to_have_count(3)
    await expect(card.locator(f'button[data-action-id="{APPROVE_ALL_ACTION}"]')).to_have_text(
        "Approve all 3"
    )
    await expect(card.locator(f'button[data-action-id="{DECLINE_ALL_ACTION}"]')).to_have_text(
        "Decline all 3"
    )
    await card.screenshot(path=tmp_path / "batch-pending.png")

    await act_as(page, "sam")
    await card.locator(f'button[data-action-id="{APPROVE_ACTION}"]').nth(1).click()
    await expect(card).to_contain_text("Approved by @sam")
    await expect(card.locator(f'button[data-action-id="{APPROVE_ACTION}"]')).to_have_count(2)
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


async def test_a_batch_card_fits_a_420px_window(narrow: tuple[Local, Page], tmp_path: Path) -> None:
    _, page = narrow
    thread = await ask(page, "delete records 6, 7 and 8")
    card = thread.get_by_test_id("card").first
    await expect(card.locator(".block.header")).to_have_text("Approve 3 calls?")
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "batch-420.png")
