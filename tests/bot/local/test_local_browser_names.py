"""Names, not ids, and a workspace that keeps its conversations, in a real browser (SPEC 10,
12, 16): a user group and a channel show as Slack shows them (``@approvers``, ``#ops``, never
``@S0APPROVERS``), the plain-text status line names the approvers; the Messages tab's
conversation is still there, with its answers, after the workspace restarts; with storage down
the conversation says so. A screenshot of each is kept under the test's ``tmp_path``.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from bot.local._workspace import CHANNEL_ID
from tests.bot.local.browser import TIMEOUT_MS, ask, browser, open_page
from tests.bot.local.fixtures import Local, local_workspace
from tests.own_servers import OwnRedis

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser"]  # fixtures


@pytest_asyncio.fixture(loop_scope="module")
async def with_groups(browser: Browser, tmp_path: Path) -> AsyncIterator[tuple[Local, Page]]:
    """A workspace whose approvers are a user group and robin."""
    async for pair in open_page(browser, tmp_path, None, APPROVERS="S0APPROVERS,U0ROBIN"):
        yield pair


async def test_groups_and_channels_show_by_name_on_cards_and_in_the_status_line(
    with_groups: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = with_groups
    thread = await ask(page, "delete record 7")
    card = thread.get_by_test_id("card").first
    await expect(card).to_contain_text("May approve: @approvers, @robin")
    await expect(card).not_to_contain_text("S0APPROVERS")
    await local.services.client.chat_postMessage(
        channel=CHANNEL_ID, text="Grants here stay in <#C0OPS>; ask <!subteam^S0APPROVERS>."
    )  # a mention written as Slack's mrkdwn shows the name
    notice = page.get_by_test_id("messages").get_by_test_id("message").last
    await expect(notice).to_contain_text("Grants here stay in #ops; ask @approvers.")
    await card.screenshot(path=tmp_path / "names-card.png")

    await page.get_by_test_id("assistant-link").click()
    composer = page.get_by_test_id("assistant-composer")
    await composer.fill("delete record 8")
    await composer.press("Enter")
    status = page.get_by_test_id("assistant-status")
    await expect(status).to_have_text(
        "countersign is waiting for @approvers, @robin to approve Delete a record…"
    )  # plain text, as Slack shows a status: names looked up, never <!subteam^…>
    await page.get_by_test_id("assistant").screenshot(path=tmp_path / "names-status.png")


async def test_a_restarted_workspace_keeps_the_conversation_in_the_messages_tab(
    browser: Browser, tmp_path: Path
) -> None:
    storage = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    async with local_workspace(STORAGE_URL=storage) as before:
        await page.goto(before.url)
        await page.get_by_test_id("assistant-link").click()
        composer = page.get_by_test_id("assistant-composer")
        await composer.fill("list records")
        await composer.press("Enter")
        answer = page.get_by_test_id("conversation").first.get_by_test_id("answer")
        await expect(answer).to_contain_text("Acme Corp")
        await composer.fill("delete record 42")
        await composer.press("Enter")
        await expect(
            page.get_by_test_id("conversation").last.get_by_test_id("card")
        ).to_contain_text("Approve")
        await before.settle()
    async with local_workspace(STORAGE_URL=storage) as after:  # the restart
        await page.goto(after.url)
        await expect(page.get_by_test_id("model")).to_have_text("offline demo model")
        await expect(page.get_by_test_id("messages")).not_to_contain_text("list records")
        await page.get_by_test_id("assistant-link").click()
        conversations = page.get_by_test_id("conversation")
        await expect(conversations).to_have_count(2)  # where they were, with their answers
        await expect(conversations.first.get_by_test_id("answer")).to_contain_text("Acme Corp")
        await expect(conversations.last.get_by_test_id("card")).to_contain_text("Approve")
        await expect(conversations.last.get_by_test_id("assistant-status")).to_contain_text(
            "is waiting for an approver"
        )
        await page.get_by_test_id("assistant").screenshot(path=tmp_path / "restarted.png")
    await context.close()


async def test_with_storage_down_the_page_tells_it_in_the_conversation(
    browser: Browser, tmp_path: Path
) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = OwnRedis(tmp_path)
    await redis.start()
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        async with local_workspace(STORAGE_URL=redis.url) as local:
            await page.goto(local.url)
            await page.get_by_test_id("assistant-link").click()
            redis.stop()  # this test's own Redis, the workspace's storage
            composer = page.get_by_test_id("assistant-composer")
            await composer.fill("list records")
            await composer.press("Enter")
            conversation = page.get_by_test_id("conversation").first
            await expect(conversation).to_contain_text("my database could not be reached")
            await expect(conversation).to_contain_text("STORAGE_URL")
            await page.get_by_test_id("assistant").screenshot(path=tmp_path / "storage-down.png")
    finally:
        redis.stop()
        await context.close()
