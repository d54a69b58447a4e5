"""The Slack outbox: writes to Slack that failed while Slack was unreachable, kept in storage
and made once Slack answers again.

A decided card that could not be updated, or the answer of a run decided elsewhere (API, expiry,
recovery, another instance) that could not be posted, is kept as an ``OutboxEntry`` (storage's
outbox: every instance sharing the storage sees it; never a memory thread, so memory retention
never touches it). ``flush_outbox`` (run by ``Background``) makes each due write: taking the
entry (``take_outbox``) keeps two instances from making it at once for ``SENDING_SECONDS``,
removing it once made (``remove_outbox``) keeps it from being made again.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.ops._outage import unavailable
from bot.slack._services import Services
from storage import OutboxEntry, utcnow

logger = logging.getLogger(__name__)

SENDING_SECONDS = 60.0
"""How long one instance owns a write it is making (then another may try)."""


class SlackWrite(BaseModel):
    """One write to Slack waiting for Slack to answer."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Unique id of the write (the id of its outbox entry)."""
    method: Literal["chat.update", "chat.postMessage"]
    """``chat.update`` a card in place, or ``chat.postMessage`` an answer in a thread."""
    channel: str
    """Where."""
    ts: str | None = None
    """The message to update (``chat.update``)."""
    thread_ts: str | None = None
    """The thread to post in (``chat.postMessage``)."""
    text: str
    """The text (fallback text of a card)."""
    blocks: list[dict[str, Any]] | None = None
    """The Block Kit blocks, when any."""


async def enqueue(services: Services, write: SlackWrite) -> None:
    """Keep ``write`` until ``flush_outbox`` makes it."""
    now = utcnow()
    entry = OutboxEntry(
        id=write.id, created_at=now, write=write.model_dump(mode="json"), next_try_at=now
    )
    await services.storage.put_outbox(entry)
    logger.info("kept a %s in %s for when Slack answers again", write.method, write.channel)


def new_write(**fields: Any) -> SlackWrite:
    """A ``SlackWrite`` with a fresh id."""
    return SlackWrite(id=uuid.uuid4().hex, **fields)


async def flush_outbox(services: Services) -> int:
    """Make every due write, oldest first; stops at the first Slack failure. Returns how
    many writes this pass made."""
    storage = services.storage
    made = 0
    for entry in await storage.list_outbox(due_at=utcnow()):
        now = utcnow()
        taken = await storage.take_outbox(
            entry.id, now=now, retry_at=now + timedelta(seconds=SENDING_SECONDS)
        )
        if taken is None:
            continue  # another instance is making it, or made it
        write = SlackWrite.model_validate(taken.write)
        try:
            await _make(services, write)
        except Exception as exc:
            # released: the next pass tries again at once
            await storage.put_outbox(dataclasses.replace(taken, next_try_at=utcnow()))
            service = unavailable(exc)
            if service is None:
                raise
            services.outages.down(service, exc)
            return made
        await storage.remove_outbox(taken.id)
        made += 1
    if made:
        services.outages.up("slack")
        logger.info("made %d Slack writes kept while Slack was unreachable", made)
    return made


async def _make(services: Services, write: SlackWrite) -> None:
    client = services.client
    if write.method == "chat.update":
        assert write.ts is not None
        await client.chat_update(
            channel=write.channel, ts=write.ts, text=write.text, blocks=write.blocks
        )
    else:
        await client.chat_postMessage(
            channel=write.channel, thread_ts=write.thread_ts, text=write.text, blocks=write.blocks
        )
