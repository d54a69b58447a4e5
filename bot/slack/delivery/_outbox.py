"""The Slack outbox: writes to Slack that failed while Slack was unreachable, kept in storage
and made once Slack answers again.

A decided card that could not be updated, or the answer of a run decided elsewhere (API, expiry,
recovery, another instance) that could not be posted, is appended as a message of one storage
thread (``OUTBOX_THREAD``: storage's existing protocol, so every instance sharing the storage
sees it). ``flush_outbox`` (run by ``Background``) makes each pending write: a ``sending`` mark
(``add_if_absent``) keeps two instances from making the same write, a ``done`` mark after it
succeeded keeps it from being made again.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.ops._outage import unavailable
from bot.slack._services import Services
from storage import MessageRecord, ThreadRecord, utcnow

logger = logging.getLogger(__name__)

OUTBOX_THREAD = "countersign:slack-outbox"
SENDING_SECONDS = 60.0
"""How long one instance owns a write it is making (then another may try)."""
DONE_SECONDS = 30 * 86400.0
"""How long a made write is remembered as done."""


class SlackWrite(BaseModel):
    """One write to Slack waiting for Slack to answer."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Unique id of the write (its done mark)."""
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
    storage = services.storage
    if await storage.get_thread(OUTBOX_THREAD) is None:
        await storage.save_thread(
            ThreadRecord(thread_id=OUTBOX_THREAD, resource_id=None, created_at=now, updated_at=now)
        )
    record = MessageRecord(
        id=write.id,
        thread_id=OUTBOX_THREAD,
        resource_id=None,
        run_id=None,
        role="system",
        content=write.model_dump(mode="json"),
        created_at=now,
    )
    await storage.append_messages([record])
    logger.info("kept a %s in %s for when Slack answers again", write.method, write.channel)


def new_write(**fields: Any) -> SlackWrite:
    """A ``SlackWrite`` with a fresh id."""
    return SlackWrite(id=uuid.uuid4().hex, **fields)


async def flush_outbox(services: Services) -> int:
    """Make every pending write, oldest first; stops at the first Slack failure. Returns how
    many writes this pass made."""
    storage = services.storage
    made = 0
    for record in await storage.list_messages(OUTBOX_THREAD):
        write = SlackWrite.model_validate(record.content)
        if await storage.get_value(_done(write)) is not None:
            continue
        if not await storage.add_if_absent(_sending(write), "1", SENDING_SECONDS):
            continue  # another instance is making it
        try:
            await _make(services, write)
        except Exception as exc:
            await storage.delete_value(_sending(write))
            service = unavailable(exc)
            if service is None:
                raise
            services.outages.down(service, exc)
            return made
        await storage.add_if_absent(_done(write), "1", DONE_SECONDS)
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


def _done(write: SlackWrite) -> str:
    return f"slack:outbox:done:{write.id}"


def _sending(write: SlackWrite) -> str:
    return f"slack:outbox:sending:{write.id}"
