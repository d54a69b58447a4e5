"""User-group members are reused for at most 30 s (SPEC 6), and dropped at once on request."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.policy._usergroups import GROUP_CACHE_SECONDS, UserGroups
from tests.fakes.slack_api import FakeSlackAPI


async def test_members_are_never_older_than_30_seconds_and_forget_asks_again(
    slack: FakeSlackAPI,
) -> None:
    now = [0.0]
    client = AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
    groups = UserGroups(client, clock=lambda: now[0])
    slack.usergroups["S1"] = ["U1"]
    assert await groups.members("S1") == {"U1"}
    slack.usergroups["S1"] = ["U2"]
    now[0] = 29.0
    assert await groups.members("S1") == {"U1"}  # within the TTL: no Slack call
    now[0] = 30.0
    assert GROUP_CACHE_SECONDS <= 30
    assert await groups.members("S1") == {"U2"}  # 30 s old: asked again
    slack.usergroups["S1"] = ["U3"]
    groups.forget("S1")
    assert await groups.members("S1") == {"U3"}
    assert len(slack.calls_to("usergroups.users.list")) == 3
