"""Who may decide: APPROVERS (users and user groups), no self-approval, same workspace only.

A refused click gets an ephemeral naming the rule, changes nothing, and is audited.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import bot.slack._messages as msg
from agents.models import ScriptItem, call, reply
from bot.policy._usergroups import UserGroups
from bot.slack._ids import APPROVE_ACTION, EDIT_ACTION
from bot.slack.delivery._webclient import create_web_client
from storage import Storage
from tests.bot.harness import CHANNEL, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

GATED: list[ScriptItem] = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]


@asynccontextmanager
async def served(
    slack: FakeSlackAPI, store: Storage, executions: Executions, rounds: int = 1, **env: str
) -> AsyncIterator[Bot]:
    agent, _ = make_agent(GATED * rounds, executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        yield bot


async def _card(bot: Bot, requester: str = "U1") -> tuple[str, PostedMessage]:
    ts = await bot.mention("delete record abc-123", user=requester)
    await bot.settle()
    [card] = bot.cards(ts)
    return ts, card


async def test_a_user_outside_approvers_is_refused_and_the_refusal_is_audited(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, APPROVERS="U5,S1") as bot:
        slack.usergroups["S1"] = ["U6"]
        ts, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        assert bot.updates_of(card.ts) == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert (ephemeral["user"], ephemeral["text"]) == ("U2", msg.REFUSED_NOT_APPROVER)
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert (refused.actor, refused.source) == ("U2", "button")
        assert refused.data["rule"] == "not-approver"
        assert refused.data["channel"] == CHANNEL
        assert refused.data["message_ts"] == card.ts
        assert refused.thread_id == f"slack:T1:{CHANNEL}:{ts}"


async def test_a_listed_user_and_a_member_of_a_listed_group_may_approve(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, 2, APPROVERS="U5 S1") as bot:
        slack.usergroups["S1"] = ["U6", "U7"]
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U6")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
        assert [c["usergroup"] for c in slack.calls_to("usergroups.users.list")] == ["S1"]
        _, second = await _card(bot)
        await bot.click(second, APPROVE_ACTION, user="U5")
        await bot.settle()
        assert len(executions.of("delete_record")) == 2
        assert slack.calls_to("chat.postEphemeral") == []


async def test_group_members_are_cached_for_at_most_30_seconds(slack: FakeSlackAPI) -> None:
    now = [1000.0]
    slack.usergroups["S1"] = ["U6"]
    groups = UserGroups(
        create_web_client("xoxb-test", api_url=slack.base_url), clock=lambda: now[0]
    )
    assert await groups.members("S1") == {"U6"}
    slack.usergroups["S1"] = ["U6", "U8"]
    now[0] += 20
    assert await groups.members("S1") == {"U6"}
    now[0] += 10  # 30 s old: never used for a decision (SPEC 6)
    assert await groups.members("S1") == {"U6", "U8"}
    assert len(slack.calls_to("usergroups.users.list")) == 2


async def test_a_group_that_cannot_be_listed_lets_nobody_through(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, APPROVERS="S404") as bot:
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.REFUSED_NOT_APPROVER


async def test_the_requester_may_not_approve_but_may_decline_their_own_request(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        ts, card = await _card(bot, requester="U1")
        for action in (APPROVE_ACTION, EDIT_ACTION):
            await bot.click(card, action, user="U1")
            await bot.settle()
        assert executions.of("delete_record") == []
        assert bot.opened_views() == []
        texts = [c["text"] for c in slack.calls_to("chat.postEphemeral")]
        assert texts == [msg.REFUSED_SELF_APPROVAL] * 2
        rules = [e.data["rule"] for e in await store.query_audit() if e.kind == "refused"]
        assert rules == ["self-approval", "self-approval"]

        await bot.decline(card, user="U1", reason="changed my mind")
        assert "Declined by <@U1>" in str(bot.cards(ts)[0].blocks)
        assert executions.of("delete_record") == []


async def test_allow_self_approval_lets_the_requester_approve(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions, ALLOW_SELF_APPROVAL="true") as bot:
        _, card = await _card(bot, requester="U1")
        await bot.click(card, APPROVE_ACTION, user="U1")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]


async def test_a_user_from_another_workspace_is_refused(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U2", user_team="T9")
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.REFUSED_OTHER_WORKSPACE
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert (refused.data["rule"], refused.data["user_team"]) == ("other-workspace", "T9")


async def test_empty_approvers_lets_anyone_in_the_workspace_decide(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U42")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]


async def test_when_the_bots_workspace_is_unknown_nobody_is_verified(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    async with served(slack, store, executions) as bot:
        _, card = await _card(bot)
        slack.fail_next("auth.test", error="ratelimited")
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["text"] == msg.REFUSED_OTHER_WORKSPACE
        await bot.click(card, APPROVE_ACTION, user="U2")  # asked again, now known
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "abc-123"}]
