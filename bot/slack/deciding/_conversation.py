"""A person's message in Slack → one turn of the agent in that Slack thread."""

from __future__ import annotations

import logging
import re

import bot.slack._messages as msg
from agents import SuspendedRunsPage
from bot.slack._services import Services
from bot.slack.deciding._ask_again import ask_again_if_unanswered, waiting_questions
from bot.slack.delivery._render import post_run, reporting_failures
from bot.slack.delivery._thread import SlackThread
from bot.slack.receiving._payloads import MessageEvent
from bot.slack.surfaces._threads import remember_assistant_thread

logger = logging.getLogger(__name__)

ACTIVE_TTL_SECONDS = 30 * 86400
"""How long after the bot's last turn in a thread plain replies there still reach the agent."""


async def mark_active(services: Services, thread_id: str) -> None:
    """Remember that the bot takes part in this thread (plain replies are for it).

    Renewed on every message the bot handles there, so the TTL counts from the last one.
    """
    key = f"slack:active:{thread_id}"
    await services.storage.delete_value(key)
    await services.storage.add_if_absent(key, "1", ACTIVE_TTL_SECONDS)


async def is_active(services: Services, thread_id: str) -> bool:
    """True when the bot takes part in this thread."""
    return await services.storage.get_value(f"slack:active:{thread_id}") is not None


def strip_mention(text: str, bot_user_id: str | None) -> str:
    """The message without the bot's own ``<@U…>`` mention."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text)
    return text.strip()


async def handle_message(
    services: Services,
    event: MessageEvent,
    *,
    team: str,
    event_id: str | None,
    bot_user_id: str | None,
) -> None:
    """Run the agent on a mention, a DM or a reply in a thread the bot takes part in."""
    if await admit(services, event, team=team, event_id=event_id):
        await answer(services, event, team=team, bot_user_id=bot_user_id)


async def admit(
    services: Services, event: MessageEvent, *, team: str, event_id: str | None
) -> bool:
    """True when the bot answers ``event``: addressed to it (or a reply in its thread) and not
    seen before; marks it seen. Raises when storage or Redis cannot say (the listener then
    answers Slack with an error, so Slack delivers the event again)."""
    thread = SlackThread(
        team=team, channel=event.channel, thread_ts=event.root_ts, requester=event.user
    )
    addressed = event.type == "app_mention" or event.channel_type == "im"
    if not addressed and not (
        event.is_thread_reply and await is_active(services, thread.thread_id)
    ):
        return False
    await mark_active(services, thread.thread_id)  # before the marks: a retry must not be lost
    if not await services.dedupe.first_event(event_id):
        logger.info("skipping a repeated delivery of event %s", event_id)
        return False
    if not await services.dedupe.first_message(team, event.channel, event.ts):
        logger.debug("skipping message %s already handled through its twin event", event.ts)
        return False
    return True


async def answer(
    services: Services, event: MessageEvent, *, team: str, bot_user_id: str | None
) -> None:
    """One turn of the agent on an admitted ``event``, shown in its thread (a failure too)."""
    thread = SlackThread(
        team=team, channel=event.channel, thread_ts=event.root_ts, requester=event.user
    )
    text = strip_mention(event.text, bot_user_id)
    async with reporting_failures(services, thread), services.locks.hold(thread.thread_id):
        if event.channel_type == "im":  # a direct message: a conversation with the agent
            await remember_assistant_thread(services.storage, thread.thread_id)
        # The thread's pending calls, read once (under the lock) for everything below: the
        # buttons hint, the questions the reply may answer, and the runtime's auto-resume.
        waiting = await services.agent.list_suspended_runs(thread_id=thread.thread_id)
        if looks_like_decision(text) and _approval_waits(waiting):
            await services.client.chat_postMessage(
                channel=thread.channel, thread_ts=thread.thread_ts, text=msg.USE_THE_BUTTONS
            )
            return
        questions = waiting_questions(waiting)
        stream = await services.agent.stream(
            text,
            thread_id=thread.thread_id,
            resource_id=thread.resource_id,
            request_context=slack_context(thread),
            auto_resume_suspended_tools=True,
            decided_by=event.user,
            requested_by=event.user,
            suspended_runs=waiting,
        )
        posted = await post_run(services, stream, thread, answered_by=event.user, answer=text)
        await ask_again_if_unanswered(
            services, thread, questions, answered_run=stream.run_id, posted=posted
        )


def _approval_waits(waiting: SuspendedRunsPage) -> bool:
    """True when a call of the thread (as listed) waits for approval."""
    return any(c.requires_approval for run in waiting.runs for c in run.tool_calls)


def slack_context(thread: SlackThread) -> dict[str, object]:
    """The ``request_context`` of a Slack run (tools and predicates see it, the model does not)."""
    return {
        "source": "slack",
        "requester": thread.requester,
        "slack": {
            "team": thread.team,
            "channel": thread.channel,
            "thread_ts": thread.thread_ts,
            "user": thread.requester,
        },
    }


# -- thread replies that look like a decision ("approve", "yes, go ahead", "decline"): under a
# pending approval such a reply never decides; the bot points to the card's buttons (SPEC 12).
_WORDS = frozenset(
    [
        "approve",
        "approved",
        "approving",
        "yes",
        "yep",
        "yeah",
        "y",
        "ok",
        "okay",
        "lgtm",
        "sure",
        "go",
        "ahead",
        "do",
        "it",
        "ship",
        "it",
        "confirm",
        "confirmed",
        "accept",
        "accepted",
        "allow",
        "allowed",
        "granted",
        "proceed",
        "decline",
        "declined",
        "deny",
        "denied",
        "reject",
        "rejected",
        "no",
        "nope",
        "n",
        "cancel",
        "stop",
        "don't",
        "dont",
        "abort",
        "veto",
    ]
)
_MAX_WORDS = 6


def looks_like_decision(text: str) -> bool:
    """True for a short reply made of decision words ("approve", "Yes, go ahead!", "decline")."""
    words = re.findall(r"[a-z']+", text.lower())
    if not words or len(words) > _MAX_WORDS:
        return False
    deciding = sum(1 for w in words if w in _WORDS)
    return deciding >= max(1, (len(words) + 1) // 2)
