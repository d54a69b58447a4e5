"""Standing grants (SPEC 15) in the local workspace, in headless Chromium with screenshots
under ``tmp_path``: the card's "Approve and allow…" modal, bounded by the demo policy's one-hour
rule, and the compact line a call approved by the grant gets instead of a card, whose Revoke
works."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from bot.slack._ids import GRANT_ACTION, REVOKE_GRANT_ACTION
from tests.bot.local.browser import act_as, ask, browser, opened
from tests.bot.local.fixtures import Local

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "opened"]  # fixtures

TITLE_PENDING = "Approve Delete a record?"


async def _grant_in_channel(page: Page, tmp_path: Path) -> None:
    """alex asks to delete record 42; sam approves it and allows it in the channel for 1 h."""
    thread = await ask(page, "delete record 42")
    card = thread.get_by_test_id("card")
    await expect(card.locator(".block.header")).to_have_text(TITLE_PENDING)
    await act_as(page, "sam")
    await card.locator(f'button[data-action-id="{GRANT_ACTION}"]').click()
    modal = page.get_by_test_id("modal")
    await expect(modal).to_contain_text("Approve and allow")
    await expect(modal).to_contain_text("Every argument stays pinned unless you let it vary.")
    durations = modal.locator("select").first
    await expect(durations.locator("option")).to_have_text(["Choose…", "15 minutes", "1 hour"])
    await expect(modal).not_to_contain_text("4 hours")  # the demo rule allows one hour at most
    await expect(modal.locator("label.choice")).to_have_text(
        [" This thread", " This channel", " id"], use_inner_text=True
    )
    await modal.locator("label.choice", has_text="This channel").locator("input").check()
    await modal.screenshot(path=tmp_path / "grant-modal.png")
    await modal.locator('[data-role="submit"]').click()
    await expect(modal).to_have_count(0)
    await expect(card.locator(".block.header")).to_have_text("✅ Approved: Delete a record")
    await expect(thread).to_contain_text("record 42")


async def test_the_grant_modal_is_bounded_by_the_rule_and_approves_with_a_grant(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    await _grant_in_channel(page, tmp_path)
    [grant] = await local.services.agent.list_grants()
    # The demo rule's free_args: the modal's default lets the record vary.
    assert (grant.granted_by, grant.pins, grant.free_args) == ("U0SAM", {}, ["id"])
    assert grant.thread_id is None
    assert grant.resource_id is not None and grant.max_uses <= 20


async def test_a_call_the_grant_approves_is_one_line_with_a_revoke_that_works(
    opened: tuple[Local, Page], tmp_path: Path
) -> None:
    local, page = opened
    await _grant_in_channel(page, tmp_path)
    await act_as(page, "alex")
    await page.get_by_test_id("channel-link").click()
    thread = await ask(page, "delete record 42")
    line = thread.locator(".message", has_text="auto-approved")
    await expect(line).to_contain_text("auto-approved under @sam's grant")
    await expect(line).to_contain_text("uses left, until")
    await expect(thread.get_by_test_id("card")).to_have_count(0)  # no card for it
    revoke = line.locator(f'button[data-action-id="{REVOKE_GRANT_ACTION}"]')
    await expect(revoke).to_have_text("Revoke")
    await line.screenshot(path=tmp_path / "grant-line.png")

    await act_as(page, "sam")
    await line.locator(f'button[data-action-id="{REVOKE_GRANT_ACTION}"]').click()
    await expect(line).to_contain_text("Grant revoked by @sam")
    await expect(line.locator("button")).to_have_count(0)
    await local.settle()
    assert await local.services.agent.list_grants() == []
    await line.screenshot(path=tmp_path / "grant-line-revoked.png")
