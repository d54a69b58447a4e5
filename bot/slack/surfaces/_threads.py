"""Which Slack threads are conversations with the agent, remembered in storage.

Under Slack's agent messaging experience (``agent_view``) every direct message with the app is
the root of one; under the legacy assistant view an ``assistant_thread_started`` event marks
its thread. The run delivery asks ``is_assistant_thread`` to decide whether to show a status
line and stream the answer. The mark lives in storage's key → value space (every instance sees
it) for as long as a thread stays active for the bot.

A direct-message channel where an ``assistant_thread_started`` came is the legacy view's
(``remember_assistant_view``): its prompts are set per thread, not at the top of the Messages
tab.
"""

from __future__ import annotations

import logging

from bot.ops._outage import unavailable
from storage import Storage

logger = logging.getLogger(__name__)

ASSISTANT_TTL_SECONDS = 30 * 86400
"""How long a thread is remembered as an assistant thread (as the bot's active threads)."""


def _key(thread_id: str) -> str:
    return f"slack:assistant:{thread_id}"


async def remember_assistant_thread(storage: Storage, thread_id: str) -> None:
    """Mark ``thread_id`` (a Slack memory thread) as an assistant thread."""
    await storage.add_if_absent(_key(thread_id), "1", ASSISTANT_TTL_SECONDS)


async def is_assistant_thread(storage: Storage, thread_id: str) -> bool:
    """True when ``thread_id`` was started as an assistant thread. A storage outage answers
    False (the answer is then posted as in a channel: nothing is lost, only the status line)."""
    try:
        return await storage.get_value(_key(thread_id)) is not None
    except Exception as exc:
        if unavailable(exc) is None:
            raise
        logger.info("could not read whether %s is an assistant thread: %s", thread_id, exc)
        return False


def _view_key(channel: str) -> str:
    return f"slack:assistant-view:{channel}"


async def remember_assistant_view(storage: Storage, channel: str) -> None:
    """Mark ``channel`` (a person's direct messages with the app) as the legacy view's."""
    await storage.add_if_absent(_view_key(channel), "1", ASSISTANT_TTL_SECONDS)


async def uses_assistant_view(storage: Storage, channel: str) -> bool:
    """True when ``channel`` had a legacy assistant thread (an outage answers False)."""
    try:
        return await storage.get_value(_view_key(channel)) is not None
    except Exception as exc:
        if unavailable(exc) is None:
            raise
        return False
