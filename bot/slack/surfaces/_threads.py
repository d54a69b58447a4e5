"""Which Slack threads are assistant threads (the app's agent view), remembered in storage.

An ``assistant_thread_started`` event marks its thread; the run delivery asks
``is_assistant_thread`` to decide whether to show a status line and stream the answer. The
mark lives in storage's key → value space (every instance sees it) for as long as a thread
stays active for the bot.
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
