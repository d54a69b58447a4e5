"""The assistant view of the local workspace in a real browser (SPEC 10, 16): a new assistant
thread shows the title and suggested prompts the bot set, the status line follows the run
through an approval, and the answer streams in with its task card. A screenshot of each state is
kept under the test's ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot import APPROVE_ACTION
from tests.bot.local.browser import act_as, browser, click, narrow, opened, overflow_x
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "narrow", "opened"]  # fixtures


async def test_an_assistant_thread_shows_prompts_status_and_a_streamed_answer(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    await page.get_by_test_id("assistant-link").click()
    pane = page.get_by_test_id("assistant")
    await expect(pane).to_be_visible()
    await page.get_by_test_id("assistant-new").click()
    await expect(page.get_by_test_id("assistant-title")).to_have_text("Ops")
    prompts = page.get_by_test_id("suggested-prompt")
    await expect(prompts).to_have_text(["What can you do?"])
    await pane.screenshot(path=tmp_path / "assistant-new.png")

    composer = page.get_by_test_id("assistant-composer")
    await composer.fill("delete record 42")
    await composer.press("Enter")
    messages = page.get_by_test_id("assistant-messages")
    card = messages.get_by_test_id("card")
    await expect(card).to_contain_text("Approve")
    status = page.get_by_test_id("assistant-status")
    await expect(status).to_have_text(
        "countersign is waiting for an approver to approve Delete a record…"
    )
    await expect(prompts).to_have_count(0)  # the person asked something: prompts are gone
    await expect(messages.get_by_test_id("task-card").first).to_have_attribute(
        "data-status", "pending"
    )
    await pane.screenshot(path=tmp_path / "assistant-waiting.png")

    await act_as(page, "sam")  # alex's assistant thread is alex's own: sam decides from Home
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await expect(home).to_contain_text("Delete a record")
    await click(page, home, APPROVE_ACTION)
    await expect(home).to_contain_text("Nothing is waiting for you.")

    await act_as(page, "alex")
    await page.get_by_test_id("assistant-link").click()
    answer = messages.get_by_test_id("answer").filter(has_text="was deleted")
    await expect(answer).to_contain_text("Done: record 42 (Acme Corp #42) was deleted.")
    await expect(answer.get_by_test_id("task-card")).to_have_attribute("data-status", "complete")
    await expect(answer.get_by_test_id("task-card")).to_contain_text("Delete a record")
    await expect(status).to_be_hidden()  # cleared when the run answered
    await expect(card).to_contain_text("Approved")
    await pane.screenshot(path=tmp_path / "assistant-answered.png")
    for shot in ("assistant-new.png", "assistant-waiting.png", "assistant-answered.png"):
        assert (tmp_path / shot).stat().st_size > 0


async def test_the_assistant_view_fits_a_phone_sized_window(
    narrow: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = narrow
    await page.get_by_test_id("assistant-link").click()
    await page.get_by_test_id("assistant-new").click()
    await page.get_by_test_id("suggested-prompt").click()  # sends "What can you do?"
    messages = page.get_by_test_id("assistant-messages")
    await expect(messages.get_by_test_id("answer")).to_have_count(1)
    await expect(page.get_by_test_id("assistant-status")).to_be_hidden()
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "assistant-420.png")
