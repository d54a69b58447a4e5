"""The local workspace kept in the bot's storage, so ``make run`` can be restarted.

Every message (the channel's threads, cards with their Block Kit JSON as last updated, and
each person's conversations in their Messages tab with the app, each in its own channel, with
its metadata) and the Messages tabs' own state (prompts, status lines, streams still open) are
stored as one JSON value under ``STATE_KEY`` of storage's key→value, written after every change
(coalesced) and at shutdown, read at start-up. Ephemeral notes and open modals are not kept:
they belong to one page session. The pending runs behind the cards are in the same storage,
so a card approved after a restart finishes its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from bot.local._workspace import Message, Workspace
from storage import Storage

logger = logging.getLogger(__name__)

STATE_KEY = "local:workspace"
KEEP_SECONDS = 365 * 86400.0
"""How long the stored workspace lives without a change."""
_FIELDS = ("ts", "user", "text", "blocks", "thread_ts", "bot_id", "edited", "channel", "metadata")


async def load(workspace: Workspace, storage: Storage) -> int:
    """Put the stored messages back into ``workspace``; returns how many."""
    raw = await storage.get_value(STATE_KEY)
    if raw is None:
        return 0
    stored = json.loads(raw)
    for item in stored.get("messages", []):
        message = Message(**{k: item[k] for k in _FIELDS if k in item})
        workspace.messages[message.ts] = message
    workspace.assistant.load(stored.get("assistant") or {})
    workspace.version = int(stored.get("version", 0)) + 1
    workspace.changed()
    return len(stored.get("messages", []))


async def save(workspace: Workspace, storage: Storage) -> None:
    """Store the channel's messages (not ephemeral notes) as they are now."""
    messages = [
        {k: getattr(m, k) for k in _FIELDS}
        for m in workspace.messages.values()
        if m.ephemeral_for is None
    ]
    assistant = workspace.assistant.to_json()
    raw = json.dumps({"version": workspace.version, "messages": messages, "assistant": assistant})
    await storage.delete_value(STATE_KEY)
    await storage.add_if_absent(STATE_KEY, raw, KEEP_SECONDS)


def keep_in_storage(app: web.Application, workspace: Workspace, storage: Storage) -> None:
    """Load the workspace when ``app`` starts, save it after changes and when it stops."""

    async def kept(app: web.Application) -> AsyncIterator[None]:
        try:
            restored = await load(workspace, storage)
        except Exception as exc:  # an empty workspace rather than no page at all
            logger.warning("could not read the saved local workspace: %s", exc)
            restored = 0
        if restored:
            logger.info("restored %d messages of the local workspace", restored)
        task = asyncio.get_running_loop().create_task(_saving(workspace, storage))
        yield
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        with contextlib.suppress(Exception):
            await save(workspace, storage)

    app.cleanup_ctx.append(kept)


async def _saving(workspace: Workspace, storage: Storage) -> None:
    saved = workspace.version
    failing = False
    while True:
        await workspace.wait(saved, 3600.0)
        if workspace.closing:
            return
        if workspace.version == saved:
            continue
        await asyncio.sleep(0.2)  # coalesce a burst of changes (a streamed answer)
        version = workspace.version
        try:
            await save(workspace, storage)
        except Exception as exc:  # storage down: try again at the next change
            if not failing:
                logger.warning("could not save the local workspace: %s", exc)
            failing = True
            continue
        failing = False
        saved = version
