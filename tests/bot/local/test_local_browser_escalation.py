"""SPEC 15 escalation as a person sees it in the local workspace: a refund over 1,000 that
nobody decides is escalated by the demo policy (after 15m the approvers are reminded, after 1h
robin may approve too); the card says who else may now approve and the thread has the mentions.
The sweep is called with a later ``now``, as for expiry; headless Chromium takes the screenshot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from bot import APPROVE_ACTION
from bot.background._periodic import sweep
from bot.slack._ids import EXTEND_ACTION
from tests.bot.local.browser import act_as, ask, browser, click, open_page
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser"]  # fixture


@pytest_asyncio.fixture(loop_scope="module")
async def approvers_only(browser: Browser, tmp_path: Path) -> AsyncIterator[tuple[Local, Page]]:
    """The local workspace with ``APPROVERS=S0APPROVERS`` (sam alone), and a page on it."""
    async for pair in open_page(browser, tmp_path, None, APPROVERS="S0APPROVERS"):
        yield pair


async def test_an_escalated_card_names_who_else_may_approve_and_the_thread_mentions_them(
    approvers_only: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = approvers_only
    thread = await ask(page, "refund order 7 for 2500")
    card = thread.get_by_test_id("card")
    context = card.locator(".block.context").last  # after the line saying why it waits
    await expect(card.locator(".block.header")).to_contain_text("Approve")
    await expect(context).to_contain_text("May approve: @approvers")
    await expect(context).not_to_contain_text("Escalated")
    [run] = (await local.services.agent.list_suspended_runs()).runs
    [pending] = run.tool_calls
    assert pending.suspended_at is not None

    reminded = await sweep(local.services, now=pending.suspended_at + timedelta(minutes=16))
    await local.settle()
    assert reminded.escalated == 1
    await expect(thread).to_contain_text("@approvers: the request to run")
    await expect(context).to_contain_text("Escalated (step 1)")

    widened = await sweep(local.services, now=pending.suspended_at + timedelta(minutes=61))
    await local.settle()
    assert widened.escalated == 1
    await expect(context).to_contain_text("Escalated: @robin may now approve too")
    await expect(context).to_contain_text("May approve: @approvers")
    await expect(thread).to_contain_text("@robin: the request to run")
    await expect(thread).to_contain_text("waited 1h for a decision. @robin may now approve it too.")
    await card.screenshot(path=tmp_path / "escalated.png")
    await page.screenshot(path=tmp_path / "escalated-thread.png")

    await act_as(page, "sam")  # the two-person rule: sam, then robin, whom the step added
    await click(page, card, APPROVE_ACTION)
    await expect(card).to_contain_text("1 of 2 approvals: @sam")
    await act_as(page, "robin")
    await click(page, card, APPROVE_ACTION)
    await expect(card.locator(".block.header")).to_contain_text("✅ Approved")


async def test_an_approver_extends_a_refund_and_its_card_shows_the_later_expiry(
    approvers_only: tuple[Local, Page], tmp_path: Path
) -> None:
    """The demo's refund rule allows Extend (max_ttl_seconds): alex, who asked, is told only
    approvers may; sam extends it and the card's expiry moves."""
    local, page = approvers_only
    thread = await ask(page, "refund order 8 for 2600")
    card = thread.get_by_test_id("card")
    await expect(card.locator(f'button[data-action-id="{EXTEND_ACTION}"]')).to_have_count(1)
    [run] = (await local.services.agent.list_suspended_runs()).runs
    [pending] = run.tool_calls
    assert pending.expires_at is not None

    await click(page, card, EXTEND_ACTION)  # as alex, who asked: not an approver
    await local.settle()
    [unchanged] = (await local.services.agent.list_suspended_runs()).runs
    assert unchanged.tool_calls[0].expires_at == pending.expires_at

    await act_as(page, "sam")
    await click(page, card, EXTEND_ACTION)
    await local.settle()
    [extended] = (await local.services.agent.list_suspended_runs()).runs
    later = extended.tool_calls[0].expires_at
    assert later is not None and later > pending.expires_at
    await expect(card).to_contain_text(f"{later.day}, {later.year}")  # "Expires Dec 3, 2026 …"
    await card.screenshot(path=tmp_path / "extended.png")
