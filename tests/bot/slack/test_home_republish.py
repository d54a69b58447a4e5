"""After a decision the Home tab is published again only for the viewers it affects, coalesced
per viewer and paced within Slack's ``views.publish`` limit; a 429 is retried after its
``Retry-After`` (counted on the fake Slack Web API, never timed)."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.models import ScriptItem, call, reply
from bot.slack._ids import APPROVE_ACTION
from storage import Storage
from tests.bot.harness import Executions
from tests.bot.slack.test_home import GATED, _buttons, _valid, served
from tests.fakes.slack_api import FakeSlackAPI


def _published_to(slack: FakeSlackAPI, since: int) -> list[str]:
    return [c.args["user_id"] for c in slack.calls[since:] if c.method == "views.publish"]


async def test_a_decision_republishes_only_the_viewers_it_affects_of_a_hundred(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, GATED, APPROVERS="U5,U6") as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        others = [f"U{n:03d}" for n in range(100, 197)]
        for viewer in ["U1", "U5", "U6", *others]:  # 100 viewers; U5 and U6 may decide
            await bot.open_home(viewer)
        assert len(bot.services.home_viewers.users()) == 100
        assert _buttons(slack.homes["U6"]) and not _buttons(slack.homes["U100"])
        before = len(slack.calls)
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U5")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        # the approvers (the decider among them) and the requester: one publish each, not 100
        assert sorted(_published_to(slack, before)) == ["U1", "U5", "U6"]
        for viewer in ("U5", "U6"):
            assert not _buttons(_valid(slack.homes[viewer]))


async def test_a_burst_of_decisions_is_coalesced_into_fewer_publishes_showing_the_last_state(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    script: list[ScriptItem] = [call("delete_record", {"id": f"r{n}"}) for n in range(5)]
    script += [reply("Done.")] * 5
    async with served(slack, store, executions, script) as bot:
        threads = []
        for n in range(5):
            threads.append(await bot.mention(f"delete r{n}", user="U1"))
            await bot.settle()
        assert len(_buttons(await bot.open_home("U2"))) == 5 * 4  # four buttons a row
        release = asyncio.Event()

        async def held(_: dict[str, Any]) -> None:  # Slack answers once all five are decided
            await release.wait()

        slack.on("views.publish", held)
        before = len(slack.calls)
        for ts in threads:
            [card] = bot.cards(ts)
            await bot.click(card, APPROVE_ACTION, user="U3")
        async with asyncio.timeout(60):
            while len(executions.of("delete_record")) < 5:  # noqa: ASYNC110 - the bot runs them
                await asyncio.sleep(0.05)
        release.set()
        await bot.settle()
        published = _published_to(slack, before)
        assert set(published) == {"U2"} and len(published) <= 2  # five decisions, not five
        assert not _buttons(_valid(slack.homes["U2"]))  # the last one shows every call decided


async def test_a_rate_limited_publish_is_retried_after_retry_after_and_shows_the_last_state(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, GATED) as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        assert _buttons(await bot.open_home("U2"))
        for _ in range(4):  # more 429s in a row than the SDK's own retries (3) would take
            slack.fail_next("views.publish", status=429, error="ratelimited", retry_after=1)
        before = len(slack.calls)
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U3")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        assert _published_to(slack, before) == ["U2"] * 5  # four 429s, each retried once
        assert not _buttons(_valid(slack.homes["U2"]))


async def test_an_approver_who_opened_home_before_a_thousand_others_is_still_republished(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """A 5,000-person workspace: an approver is not forgotten because a thousand people opened
    their Home tab after them (each instance remembered the 500 most recent)."""
    async with served(slack, store, executions, GATED, APPROVERS="U5,U6") as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        await bot.open_home("U5")
        for n in range(1_000):
            await bot.open_home(f"W{n:04d}")
        assert _buttons(slack.homes["U5"])
        before = len(slack.calls)
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U6")
        await bot.settle()
        assert "U5" in _published_to(slack, before)
        assert not _buttons(_valid(slack.homes["U5"]))


async def test_a_user_groups_members_among_the_viewers_are_republished_and_no_one_else(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    slack.usergroups["S1"] = ["U7", "U8"]
    async with served(slack, store, executions, GATED, APPROVERS="U5,S1") as bot:
        ts = await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        for viewer in ("U7", "U9", "U10", "U11"):  # U7 through S1; U8 never opened Home
            await bot.open_home(viewer)
        assert _buttons(slack.homes["U7"]) and not _buttons(slack.homes["U9"])
        before = len(slack.calls)
        [card] = bot.cards(ts)
        await bot.click(card, APPROVE_ACTION, user="U5")
        await bot.settle()
        assert _published_to(slack, before) == ["U7"]
        assert not _buttons(_valid(slack.homes["U7"]))


async def test_a_decision_looks_among_the_viewers_only_for_the_approvers_its_rule_names(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    """The gate is asked only about viewers who can be approvers at all: those the rule names,
    in person or as a member of a named group; none of a thousand others."""
    slack.usergroups["S1"] = ["U7"]
    async with served(slack, store, executions, GATED, APPROVERS="U5,S1") as bot:
        await bot.mention("delete abc-123", user="U1")
        await bot.settle()
        [run] = (await bot.services.agent.list_suspended_runs()).runs
        [pending] = run.tool_calls
        viewers = {"U5", "U7", "U9", *(f"W{n:04d}" for n in range(1_000))}
        named = await bot.services.policy.who_may_approve(pending, viewers)
        assert named == {"U5", "U7"}
