"""The app's Messages tab in the local workspace, in a real browser (SPEC 10, 16: Slack's agent
messaging experience): opening it shows the prompts the bot pinned at its top, a message starts
a conversation whose status line follows the run through an approval (kept standing while it
waits) and whose first task card completes when the card takes over, and the answer streams in
with its task card. A screenshot of each state is kept under the test's ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot import APPROVE_ACTION
from bot.local._workspace import dm_of
from bot.slack._ids import thread_id
from bot.slack.surfaces._status import refresh_statuses
from tests.bot.local.browser import act_as, browser, click, narrow, opened, overflow_x
from tests.bot.local.fixtures import ALEX, Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "narrow", "opened"]  # fixtures


async def test_the_messages_tab_shows_prompts_status_and_a_streamed_answer(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    await page.get_by_test_id("assistant-link").click()
    pane = page.get_by_test_id("assistant")
    await expect(pane).to_be_visible()
    await expect(page.get_by_test_id("assistant-title")).to_have_text("countersign · Messages")
    prompts = page.get_by_test_id("suggested-prompt")
    await expect(prompts).to_have_text(["What can you do?"])  # pinned at the top
    await pane.screenshot(path=tmp_path / "messages-tab.png")

    composer = page.get_by_test_id("assistant-composer")
    await composer.fill("delete record 42")
    await composer.press("Enter")
    conversation = page.get_by_test_id("conversation").last
    card = conversation.get_by_test_id("card")
    await expect(card).to_contain_text("Approve")
    status = conversation.get_by_test_id("assistant-status")
    waiting = "countersign is waiting for an approver to approve Delete a record…"
    await expect(status).to_have_text(waiting)
    task = conversation.get_by_test_id("task-card").first
    await expect(task).to_have_attribute("data-status", "complete")  # never left "pending"
    await expect(task).to_contain_text("Delete a record: sent for approval")
    await expect(prompts).to_have_text(["What can you do?"])  # still at the top
    kept = local.services.statuses.kept(
        thread_id("T0LOCAL", dm_of(ALEX), await conversation.get_attribute("data-ts") or "")
    )
    assert kept is not None  # set again before Slack's 2-minute clear while it waits:
    assert await refresh_statuses(local.services, now=kept.shown_at + 91) == 1
    await expect(status).to_have_text(waiting)
    await pane.screenshot(path=tmp_path / "messages-waiting.png")

    await act_as(page, "sam")  # alex's conversation is alex's own: sam decides from Home
    await page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    await expect(home).to_contain_text("Delete a record")
    await click(page, home, APPROVE_ACTION)
    await expect(home).to_contain_text("Nothing is waiting for you.")

    await act_as(page, "alex")
    await page.get_by_test_id("assistant-link").click()
    answer = conversation.get_by_test_id("answer").filter(has_text="was deleted")
    await expect(answer).to_contain_text("Done: record 42 (Acme Corp #42) was deleted.")
    await expect(answer.get_by_test_id("task-card")).to_have_attribute("data-status", "complete")
    await expect(answer.get_by_test_id("task-card")).to_contain_text("Delete a record")
    await expect(status).to_have_count(0)  # cleared when the run answered
    await expect(card).to_contain_text("Approved")
    await pane.screenshot(path=tmp_path / "messages-answered.png")
    for shot in ("messages-tab.png", "messages-waiting.png", "messages-answered.png"):
        assert (tmp_path / shot).stat().st_size > 0


async def test_each_message_starts_its_own_conversation_and_a_reply_continues_one(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = opened
    await page.get_by_test_id("assistant-link").click()
    composer = page.get_by_test_id("assistant-composer")
    await composer.fill("list records")
    await composer.press("Enter")
    conversations = page.get_by_test_id("conversation")
    await expect(conversations).to_have_count(1)
    await expect(conversations.first.get_by_test_id("answer")).to_contain_text("Acme Corp")
    await composer.fill("show record 3")
    await composer.press("Enter")
    await expect(conversations).to_have_count(2)  # a thread root of its own
    await conversations.first.get_by_test_id("conversation-reply").click()
    await composer.fill("show record 4")
    await composer.press("Enter")
    await expect(conversations).to_have_count(2)
    await expect(conversations.first).to_contain_text("show record 4")
    await page.get_by_test_id("assistant").screenshot(path=tmp_path / "messages-threads.png")


async def test_the_messages_tab_fits_a_phone_sized_window(
    narrow: tuple[Local, Page], tmp_path: Path
) -> None:
    _, page = narrow
    await page.get_by_test_id("assistant-link").click()
    await page.get_by_test_id("suggested-prompt").click()  # sends "What can you do?"
    messages = page.get_by_test_id("assistant-messages")
    await expect(messages.get_by_test_id("answer")).to_have_count(1)
    await expect(page.get_by_test_id("assistant-status")).to_have_count(0)
    assert await overflow_x(page) == 0
    await page.screenshot(path=tmp_path / "messages-420.png")
