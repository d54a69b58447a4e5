"""Headless Chromium (Debian's ``chromium``) driven by Playwright, opened on a local workspace:
the fixtures and the few gestures the browser tests share.

Skipped only when /usr/bin/chromium is missing outside CI; ``.ci/run`` installs it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Locator, Page, async_playwright, expect

from tests.bot.local.fixtures import Local, local_workspace

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
NARROW = {"width": 420, "height": 860}
"""A phone-sized window."""


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


async def open_page(
    browser: Browser, tmp_path: Path, viewport: dict[str, int] | None, **env: str
) -> AsyncIterator[tuple[Local, Page]]:
    """A local workspace (configured with ``env`` besides its storage) and a page on it."""
    storage = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    async with local_workspace(STORAGE_URL=storage, **env) as local:
        context = await browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await page.goto(local.url)
        await expect(page.get_by_test_id("model")).to_have_text("offline demo model")
        yield local, page
        await context.close()
        assert errors == []


@pytest_asyncio.fixture(loop_scope="module")
async def opened(browser: Browser, tmp_path: Path) -> AsyncIterator[tuple[Local, Page]]:
    """A local workspace and the page on it, in a desktop-sized window."""
    async for pair in open_page(browser, tmp_path, None):
        yield pair


@pytest_asyncio.fixture(loop_scope="module")
async def narrow(browser: Browser, tmp_path: Path) -> AsyncIterator[tuple[Local, Page]]:
    """The same at 420 px wide."""
    async for pair in open_page(browser, tmp_path, NARROW):
        yield pair


async def ask(page: Page, text: str) -> Locator:
    """Post ``text`` in the channel; the page opens its thread. Returns the thread pane."""
    composer = page.get_by_test_id("composer")
    await composer.fill(text)
    await composer.press("Enter")
    thread = page.get_by_test_id("thread")
    await expect(thread).to_be_visible()
    await expect(thread.locator(".message").first).to_contain_text(text)
    return thread


async def act_as(page: Page, name: str) -> None:
    await page.get_by_test_id("user-select").select_option(label=name)


async def click(page: Page, card: Locator, action_id: str) -> None:
    """Click a button of ``card``, confirming its confirm dialog if one opens."""
    await card.locator(f'button[data-action-id="{action_id}"]').click()
    confirm = page.get_by_test_id("confirm")
    if await confirm.count():
        await confirm.locator('[data-role="confirm"]').click()


async def overflow_x(page: Page) -> int:
    """How many pixels the page is wider than its window (0: no horizontal scrolling)."""
    width: int = await page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )
    return width
