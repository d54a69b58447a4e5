"""SPEC 16, round 4: Slack's agent messaging experience (``agent_view``, ``manifest.yml``).

The person opens the app's Messages tab (``app_home_opened`` with ``tab == "messages"``: the
suggested prompts at its top, set without ``thread_ts``), each direct message is the root of its
own thread (a conversation with the agent: status line, streamed answer, cards), and
``app_context_changed`` is acknowledged. The fake Web API plays an agent app
(``surfaces.view = "agent"``): a prompt call with ``thread_ts`` silently does nothing there, as
Slack documents. The legacy assistant view is tested in ``test_assistant_threads``; the same bot
serves both.
"""

from __future__ import annotations

from typing import Any

from agents.models import call, reply
from storage import Storage
from tests.bot.harness import TEAM, Bot, next_ts
from tests.bot.slack.test_assistant_threads import assistant_started, served
from tests.fakes.slack_api import FakeSlackAPI

DM = "D1"


def messages_tab_opened(user: str = "U1", channel: str = DM) -> dict[str, Any]:
    """The ``app_home_opened`` event Slack sends when a person opens the Messages tab."""
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": "messages",
        "event_ts": next_ts(),
    }


def context_changed(channel: str = "C1") -> dict[str, Any]:
    """``app_context_changed``: the person now looks at ``channel`` (agent view only)."""
    entity = {"type": "slack#/types/channel_id", "value": channel, "team_id": TEAM}
    return {"type": "app_context_changed", "context": {"entities": [entity]}}


async def direct_message(bot: Bot, text: str, *, user: str = "U1") -> str:
    """A top-level direct message in the Messages tab; returns its ``ts`` (its thread's root)."""
    ts = await bot.message(text, user=user, channel=DM, channel_type="im")
    await bot.settle()
    return ts


def statuses(slack: FakeSlackAPI, thread_ts: str) -> list[str]:
    return [s for c, t, s in slack.surfaces.statuses if (c, t) == (DM, thread_ts)]


async def test_opening_the_messages_tab_pins_the_suggested_prompts_at_its_top(
    slack: FakeSlackAPI, store: Storage
) -> None:
    slack.surfaces.view = "agent"
    instructions = "You run ops.\n- list the records\n- delete record 42\n"
    async with served(slack, store, [], instructions=instructions) as bot:
        response = await bot.send_event(messages_tab_opened())
        assert response.status == 200
        await bot.settle()
    [prompts] = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in prompts.args  # an agent app's prompts belong to the tab
    assert slack.surfaces.tab_prompts[DM] == [
        {"title": "List the records", "message": "List the records"},
        {"title": "Delete record 42", "message": "Delete record 42"},
    ]
    assert slack.calls_to("views.publish") == []  # the Home tab is another tab


async def test_each_direct_message_is_a_thread_root_with_a_status_and_a_streamed_answer(
    slack: FakeSlackAPI, store: Storage
) -> None:
    slack.surfaces.view = "agent"
    script = [reply("Three records."), reply("Nothing else.")]
    async with served(slack, store, script) as bot:
        first = await direct_message(bot, "list the records")
        second = await direct_message(bot, "anything else?")
        model = bot.agent.model
    [one] = slack.thread(DM, first)
    [two] = slack.thread(DM, second)
    assert (one.text, two.text) == ("Three records.", "Nothing else.")
    assert [s["thread_ts"] for s in slack.calls_to("chat.startStream")] == [first, second]
    assert statuses(slack, first) == ["is thinking…", ""]  # shown while it works, then cleared
    assert slack.calls_to("chat.postMessage") == []  # streamed, not posted
    second_request = model.requests[1].messages  # type: ignore[attr-defined]
    assert "list the records" not in [m.content for m in second_request]  # its own thread


async def test_a_conversation_waits_for_approval_with_its_status_then_answers(
    slack: FakeSlackAPI, store: Storage
) -> None:
    slack.surfaces.view = "agent"
    script = [call("delete_record", {"id": "a"}), reply("Deleted record a.")]
    async with served(slack, store, script, APPROVERS="U2") as bot:
        root = await direct_message(bot, "delete record a")
        waiting = "is waiting for @sam to approve delete-record…"
        assert slack.surfaces.status_of(DM, root) == waiting
        [card] = bot.cards(root, channel=DM)  # a message of the thread, never streamed
        assert card.ts not in {c["ts"] for c in slack.calls_to("chat.stopStream")}
        await bot.click(card, "approval:approve", user="U2")
        await bot.settle()
    assert slack.surfaces.status_of(DM, root) == ""
    [answer] = [m for m in slack.thread(DM, root) if m.text == "Deleted record a."]
    assert [b["status"] for b in answer.blocks] == ["complete"]
    assert slack.surfaces.streaming == set()


async def test_a_context_change_is_acknowledged_and_changes_nothing(
    slack: FakeSlackAPI, store: Storage
) -> None:
    slack.surfaces.view = "agent"
    async with served(slack, store, []) as bot:
        before = len(slack.calls)
        assert (await bot.send_event(context_changed())).status == 200
        assert (await bot.send_event({"type": "app_context_changed", "context": {}})).status == 200
        await bot.settle()
        assert [c.method for c in slack.calls[before:] if c.method != "auth.test"] == []


async def test_a_legacy_assistant_channel_keeps_its_prompts_per_thread(
    slack: FakeSlackAPI, store: Storage
) -> None:
    async with served(slack, store, []) as bot:  # the fake plays the legacy assistant view
        thread_ts = next_ts()
        assert (await bot.send_event(assistant_started(thread_ts))).status == 200
        await bot.settle()
        assert (await bot.send_event(messages_tab_opened())).status == 200
        await bot.settle()
    [prompts] = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert prompts["thread_ts"] == thread_ts  # the thread's, never the tab's
    assert slack.surfaces.tab_prompts == {}
