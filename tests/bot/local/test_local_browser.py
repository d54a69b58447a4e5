"""The local workspace in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright opens the page, asks to delete a record, and approves or declines the card.

Skipped only when /usr/bin/chromium is missing outside CI; ``.ci/run`` installs it
(``tests/bot/local/browser.py``).
"""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from bot import APPROVE_ACTION, DECLINE_ACTION
from tests.bot.local.browser import act_as, ask, browser, click, opened
from tests.bot.local.fixtures import Local

# One Chromium for the module (launching it takes seconds): tests and fixtures share its loop.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "opened"]  # fixtures


async def test_approving_a_delete_in_the_browser_updates_the_card_and_removes_the_record(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await ask(page, "delete record 42")
    card = thread.get_by_test_id("card")
    await expect(card.locator(".block.header")).to_contain_text("Approve")
    await expect(card.locator(f'button[data-action-id="{APPROVE_ACTION}"]')).to_have_class(
        "btn primary"
    )
    await act_as(page, "sam")
    await click(page, card, APPROVE_ACTION)

    decided = thread.locator(".message", has_text="Approved by")
    await expect(decided).to_contain_text("@sam")
    await expect(thread.locator("button[data-action-id]")).to_have_count(0)
    await expect(thread).to_contain_text("Done: record 42 (Acme Corp #42) was deleted.")

    checked = await ask(page, "show record 42")
    await expect(checked).to_contain_text("There is no record 42.")


async def test_declining_a_delete_in_the_browser_keeps_the_record(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await ask(page, "delete record 7")
    card = thread.get_by_test_id("card")
    await expect(card).to_contain_text("delete-record")
    await act_as(page, "sam")
    await click(page, card, DECLINE_ACTION)
    modal = page.get_by_test_id("modal")
    declined = thread.locator(".message", has_text="Declined by")
    await expect(modal.or_(declined).first).to_be_visible()
    if await modal.count():  # the decline-reason modal: submit it without a reason
        await modal.locator('[data-role="submit"]').click()
        await expect(modal).to_have_count(0)
    await expect(declined).to_contain_text("@sam")
    await expect(thread).to_contain_text("it was declined")

    checked = await ask(page, "show record 7")
    await expect(checked).to_contain_text("Record 7:")


async def test_a_ticket_question_is_answered_in_the_browser_by_modal_or_thread_reply(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await ask(page, "open a ticket about the printer")
    await expect(thread).to_contain_text("What priority should the ticket about 'printer' have")
    provide = thread.locator("button[data-action-id]")
    if await provide.count():  # "Provide details": a modal generated from the resume schema
        await provide.first.click()
        modal = page.get_by_test_id("modal")
        await modal.locator("select").first.select_option("high")
        await modal.locator('[data-role="submit"]').click()
        await expect(modal).to_have_count(0)
    else:
        reply = page.get_by_test_id("thread-composer")
        await reply.fill("high please")
        await reply.press("Enter")
    await expect(thread).to_contain_text("Opened ticket #1 “printer” with high priority.")


async def test_editing_the_arguments_in_the_modal_then_approving_runs_the_edited_call(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await ask(page, "delete record 5")
    card = thread.get_by_test_id("card")
    await expect(card).to_contain_text("delete-record")
    edit = card.locator('button[data-action-id="approval:edit"]')
    if not await edit.count():
        pytest.skip("this build's cards have no Edit button")
    await act_as(page, "sam")
    await edit.click()
    modal = page.get_by_test_id("modal")
    await modal.locator("input").first.fill("6")
    await modal.locator('[data-role="submit"]').click()
    await expect(modal).to_have_count(0)
    await expect(thread).to_contain_text("Done: record 6 (Wayne Ent. #6) was deleted.")
