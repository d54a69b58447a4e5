"""Issue 26 in a real browser (headless Debian Chromium, screenshots under ``tmp_path``): an
answered question shows the ``resume_data`` the tool received, rendered like arguments, and the
reply it came from; a call never shown as a card (its run started outside Slack) is on the Home
tab with its arguments and buttons, and deciding it there says so there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot import APPROVE_ACTION
from bot.slack._ids import PROVIDE_ACTION
from tests.bot.local.browser import act_as, ask, browser, opened
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "opened"]  # fixtures

BUTTONS = "button[data-action-id]"
ANSWER = "Answer (what the tool received)"


async def test_a_question_answered_by_a_thread_reply_shows_the_answer_as_fields_and_the_reply(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "open a ticket about the printer")
    await expect(thread).to_contain_text("What priority should the ticket about 'printer' have")
    reply = page.get_by_test_id("thread-composer")
    await reply.fill("high please")
    await reply.press("Enter")
    await expect(thread).to_contain_text("Opened ticket #1 “printer” with high priority.")
    answered = thread.locator(".message", has_text=ANSWER)
    await expect(answered).to_have_count(1)
    await expect(answered.locator(".block.fields")).to_have_text(re.compile(r"priority\s*high"))
    await expect(answered).to_contain_text("From the reply: “high please”")
    await expect(answered).to_contain_text("Details provided by @alex")
    await expect(answered.locator(BUTTONS)).to_have_count(0)  # nothing live on an answered one
    await expect(answered).not_to_contain_text("{")  # fields, not raw JSON
    await answered.screenshot(path=tmp_path / "answered-by-reply.png")


async def test_a_question_answered_in_the_modal_shows_the_answer_as_fields_not_json(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    thread = await ask(page, "open a ticket about the door")
    provide = thread.locator(f'button[data-action-id="{PROVIDE_ACTION}"]')
    await provide.click()
    modal = page.get_by_test_id("modal")
    await modal.locator("select").first.select_option("low")
    await modal.locator('[data-role="submit"]').click()
    await expect(modal).to_have_count(0)
    await expect(thread).to_contain_text("Opened ticket #1 “door” with low priority.")
    answered = thread.locator(".message", has_text=ANSWER)
    await expect(answered.locator(".block.fields")).to_have_text(re.compile(r"priority\s*low"))
    await expect(answered).not_to_contain_text("{")
    await expect(answered).not_to_contain_text("From the reply")  # no reply: the modal
    await expect(answered.locator(BUTTONS)).to_have_count(0)
    await answered.screenshot(path=tmp_path / "answered-by-modal.png")


async def test_a_call_started_outside_slack_is_on_the_home_tab_and_decided_there(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    agent = local.services.agent
    result = await agent.generate(
        "delete record 12", thread_id="api:ticket-12", requested_by="U0ALEX"
    )
    assert result.finish_reason == "suspended"
    await act_as(page, "sam")
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await expect(home.locator(".block.fields")).to_have_text([re.compile(r"id\s*12")])
    await expect(home).to_contain_text("in no Slack thread")
    await expect(home.locator(BUTTONS)).to_have_text(
        ["Approve", "Approve and allow…", "Edit", "Decline", "Withdraw"]
    )
    await page.screenshot(path=tmp_path / "home-no-thread.png")
    await home.locator(f'[data-action-id="{APPROVE_ACTION}"]').click()
    confirm = page.get_by_test_id("confirm")
    if await confirm.count():
        await confirm.locator('[data-role="confirm"]').click()
    await expect(home).to_contain_text(re.compile(r"You approved \W?delete.record\W?: recorded"))
    await expect(home).to_contain_text("Nothing is waiting for you.")
    await agent.drain()
    await page.get_by_test_id("channel-link").click()
    checked = await ask(page, "show record 12")
    await expect(checked).to_contain_text("There is no record 12.")
