"""Conversations with the agent (SPEC 16), in both of Slack's views.

The agent messaging experience (``agent_view``, ``manifest.yml``): opening the app's Messages
tab (``app_home_opened`` with ``tab == "messages"``) sets the suggested prompts at its top
(``open_messages_tab``: no ``thread_ts``); each direct message is the root of its own thread,
a conversation with the agent (``bot.slack.deciding._conversation`` marks it);
``app_context_changed`` (what the person looks at) is acknowledged by the listener.

The legacy assistant view (``assistant_view``, ``manifest.assistant-view.yml``), through
slack-bolt's ``AsyncAssistant`` middleware: ``assistant_thread_started`` remembers the thread as
an assistant thread, then gives it its title and suggested prompts;
``assistant_thread_context_changed`` is acknowledged and changes nothing.

In both, the agent is not told which channel the person is viewing, and a person's message is a
memory thread like any other, with the same status line, streamed answer, cards, policy and
decisions (the middleware passes messages on to the ordinary ``message`` listener).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from slack_bolt.async_app import AsyncAssistant
from slack_sdk.errors import SlackApiError

import bot.slack._messages as msg
from bot.slack._ids import resource_id, thread_id
from bot.slack._services import Services
from bot.slack.surfaces._prompts import suggested_prompts, thread_title
from bot.slack.surfaces._threads import (
    remember_assistant_thread,
    remember_assistant_view,
    uses_assistant_view,
)

logger = logging.getLogger(__name__)


class _Slack(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AssistantThread(_Slack):
    """The ``assistant_thread`` of an assistant event."""

    user_id: str
    channel_id: str
    thread_ts: str
    context: dict[str, Any] = {}


class AssistantThreadEvent(_Slack):
    """``assistant_thread_started`` / ``assistant_thread_context_changed``."""

    type: str
    assistant_thread: AssistantThread


class AssistantEnvelope(_Slack):
    """The envelope of an assistant event."""

    team_id: str | None = None
    event: AssistantThreadEvent


def create_assistant(services: Services) -> AsyncAssistant:
    """The ``AsyncAssistant`` of the bot: each listener parses and hands its work on."""
    assistant = AsyncAssistant()

    @assistant.thread_started
    async def on_thread_started(body: dict[str, Any]) -> None:
        try:
            envelope = AssistantEnvelope.model_validate(body)
        except ValidationError:
            logger.warning("ignoring an assistant_thread_started that does not parse")
            return
        services.runner.submit(
            start_thread(services, envelope),
            name=f"assistant-{envelope.event.assistant_thread.thread_ts}",
        )

    @assistant.thread_context_changed
    async def on_context_changed(body: dict[str, Any]) -> None:
        return None  # acknowledged; the agent is not given the channel being viewed

    return assistant


async def start_thread(services: Services, envelope: AssistantEnvelope) -> None:
    """Remember the new assistant thread, then give it its title and suggested prompts."""
    thread = envelope.event.assistant_thread
    team = envelope.team_id or str(thread.context.get("team_id") or "")
    await remember_assistant_thread(
        services.storage, thread_id(team, thread.channel_id, thread.thread_ts)
    )
    await remember_assistant_view(services.storage, thread.channel_id)
    agent = services.agent
    prompts = suggested_prompts(services.settings.suggested_prompts, agent.instructions)
    client = services.client
    try:
        await client.assistant_threads_setTitle(
            channel_id=thread.channel_id, thread_ts=thread.thread_ts, title=thread_title(agent.name)
        )
        await client.assistant_threads_setSuggestedPrompts(
            channel_id=thread.channel_id,
            thread_ts=thread.thread_ts,
            title=msg.PROMPTS_TITLE,
            prompts=[p.as_dict() for p in prompts],
        )
    except SlackApiError as exc:
        logger.warning(
            "could not set up the assistant thread in %s: %s",
            resource_id(team, thread.channel_id),
            exc.response.get("error"),
        )


async def open_messages_tab(services: Services, user: str, channel: str | None) -> None:
    """The person opened the app's Messages tab (agent view): the suggested prompts, pinned at
    its top (set without ``thread_ts``, as Slack asks of agent apps). Nothing in a channel of
    the legacy view, whose prompts belong to each assistant thread."""
    if channel is None or await uses_assistant_view(services.storage, channel):
        return
    prompts = suggested_prompts(services.settings.suggested_prompts, services.agent.instructions)
    try:
        await services.client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, title=msg.PROMPTS_TITLE, prompts=[p.as_dict() for p in prompts]
        )
    except SlackApiError as exc:
        logger.warning(
            "could not set the suggested prompts of %s's Messages tab: %s",
            user,
            exc.response.get("error"),
        )
