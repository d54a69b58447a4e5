"""The local workspace in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright opens the page, asks to delete a record, and approves or declines the card.

Skipped only when /usr/bin/chromium is missing outside CI; ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from bot import APPROVE_ACTION, DECLINE_ACTION
from tests.bot.local.fixtures import Local, local_workspace

# One Chromium for the module (launching it takes seconds): tests and fixtures share its loop.
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 15_000
HAVE_CHROMIUM = Path(CHROMIUM).exists()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    if not HAVE_CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def opened(browser: Browser, tmp_path: Path) -> AsyncIterator[tuple[Local, Page]]:
    storage = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with local_workspace(STORAGE_URL=storage) as local:
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(local.url)
        await expect(page.get_by_test_id("model")).to_have_text("offline demo model")
        yield local, page
        await context.close()
        assert errors == []


async def _ask(page: Page, text: str) -> Locator:
    """Post ``text`` in the channel; the page opens its thread. Returns the thread pane."""
    composer = page.get_by_test_id("composer")
    await composer.fill(text)
    await composer.press("Enter")
    thread = page.get_by_test_id("thread")
    await expect(thread).to_be_visible()
    await expect(thread.locator(".message").first).to_contain_text(text)
    return thread


async def _act_as(page: Page, name: str) -> None:
    await page.get_by_test_id("user-select").select_option(label=name)


async def _click(page: Page, card: Locator, action_id: str) -> None:
    await card.locator(f'button[data-action-id="{action_id}"]').click()
    confirm = page.get_by_test_id("confirm")
    if await confirm.count():
        await confirm.locator('[data-role="confirm"]').click()


async def test_approving_a_delete_in_the_browser_updates_the_card_and_removes_the_record(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await _ask(page, "delete record 42")
    card = thread.get_by_test_id("card")
    await expect(card).to_contain_text("Approval needed")
    await expect(card.locator(f'button[data-action-id="{APPROVE_ACTION}"]')).to_have_class(
        "btn primary"
    )
    await _act_as(page, "sam")
    await _click(page, card, APPROVE_ACTION)

    decided = thread.locator(".message", has_text="Approved by")
    await expect(decided).to_contain_text("@sam")
    await expect(thread.locator("button[data-action-id]")).to_have_count(0)
    await expect(thread).to_contain_text("Done: record 42 (Acme Corp #42) was deleted.")

    checked = await _ask(page, "show record 42")
    await expect(checked).to_contain_text("There is no record 42.")


async def test_declining_a_delete_in_the_browser_keeps_the_record(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await _ask(page, "delete record 7")
    card = thread.get_by_test_id("card")
    await expect(card).to_contain_text("delete-record")
    await _act_as(page, "sam")
    await _click(page, card, DECLINE_ACTION)
    modal = page.get_by_test_id("modal")
    declined = thread.locator(".message", has_text="Declined by")
    await expect(modal.or_(declined).first).to_be_visible()
    if await modal.count():  # the decline-reason modal: submit it without a reason
        await modal.locator('[data-role="submit"]').click()
        await expect(modal).to_have_count(0)
    await expect(declined).to_contain_text("@sam")
    await expect(thread).to_contain_text("it was declined")

    checked = await _ask(page, "show record 7")
    await expect(checked).to_contain_text("Record 7:")


async def test_a_ticket_question_is_answered_in_the_browser_by_modal_or_thread_reply(
    opened: tuple[Local, Page],
) -> None:
    _, page = opened
    thread = await _ask(page, "open a ticket about the printer")
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
    thread = await _ask(page, "delete record 5")
    card = thread.get_by_test_id("card")
    await expect(card).to_contain_text("delete-record")
    edit = card.locator('button[data-action-id="approval:edit"]')
    if not await edit.count():
        pytest.skip("this build's cards have no Edit button")
    await _act_as(page, "sam")
    await edit.click()
    modal = page.get_by_test_id("modal")
    await modal.locator("input").first.fill("6")
    await modal.locator('[data-role="submit"]').click()
    await expect(modal).to_have_count(0)
    await expect(thread).to_contain_text("Done: record 6 (Wayne Ent. #6) was deleted.")
