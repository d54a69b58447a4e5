"""Assistant threads (SPEC 16) through slack-bolt's ``AsyncAssistant`` middleware.

``assistant_thread_started``: the thread is remembered as an assistant thread (its runs show a
status line and stream their answers), then gets its title and suggested prompts.
``assistant_thread_context_changed`` (the person looks at another channel) is acknowledged and
changes nothing: the agent is not told which channel the person is viewing.
A person's message in an assistant thread is not the assistant's: the middleware passes it on to
the ordinary ``message`` listener, so it is a memory thread like any other, with the same cards,
policy and decisions.
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
from bot.slack.surfaces._threads import remember_assistant_thread

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
