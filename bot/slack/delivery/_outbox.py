"""The Slack outbox: writes to Slack that failed while Slack was unreachable, kept in storage
and made once Slack answers again.

A decided card that could not be updated, or the answer of a run decided elsewhere (API, expiry,
recovery, another instance) that could not be posted, is kept as an ``OutboxEntry`` (storage's
outbox: every instance sharing the storage sees it; never a memory thread, so memory retention
never touches it). ``flush_outbox`` (run by ``Background``) makes each due write: taking the
entry (``take_outbox``) keeps two instances from making it at once for ``SENDING_SECONDS``,
removing it once made (``remove_outbox``) keeps it from being made again.

Each message it posts carries its write's id in Slack message ``metadata``: a write whose
outcome is uncertain (an earlier attempt was taken and never removed: Slack may have taken the
post, then storage failed while the entry was removed) is looked for in its thread first and
not posted again when it is there. An approval card that could not be posted is kept too
(``method="card"``) and posted, from the call as it then is, by ``make_card``.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agents import HeldLease, StreamFence
from bot.ops._outage import unavailable, waiting_out
from bot.slack._services import Services
from bot.slack.delivery.sending._fence import fence_of
from storage import OutboxEntry, utcnow

logger = logging.getLogger(__name__)

SENDING_SECONDS = 60.0
"""How long one instance owns a write it is making (then another may try)."""
METADATA_EVENT = "countersign_outbox"
"""``metadata.event_type`` of the messages the outbox posts (``event_payload.id``: the write)."""
_THREAD_PAGE = 200


class KeptCard(BaseModel):
    """An approval card that could not be posted: which call, in which thread, for whom."""

    model_config = ConfigDict(frozen=True)

    team: str
    requester: str | None
    run_id: str
    tool_call_id: str


class FenceLease(BaseModel):
    """A lease a kept write was made under (``HeldLease`` as stored)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    key: str
    owner: str | None
    epoch: int


class SlackWrite(BaseModel):
    """One write to Slack waiting for Slack to answer."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Unique id of the write (the id of its outbox entry)."""
    method: Literal["chat.update", "chat.postMessage", "card"]
    """``chat.update`` a card in place, ``chat.postMessage`` an answer in a thread, or ``card``:
    post the approval card of ``card`` (built when it is made)."""
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
    card: KeptCard | None = None
    """For ``method="card"``: the call whose card to post."""
    fence: list[FenceLease] = []
    """The leases of the run's work it was written under: once any was taken over, the
    write is dropped instead of made (the instance that took over says what happened)."""

    @property
    def metadata(self) -> dict[str, Any]:
        """What the posted message carries so a retry can find it."""
        return {"event_type": METADATA_EVENT, "event_payload": {"id": self.id}}


MakeCard = Callable[[Services, SlackWrite], Awaitable[None]]
"""Posts a kept card (it looks for the card in its thread first)."""


def _fenced_write(services: Services, write: SlackWrite) -> SlackWrite:
    """``write`` carrying the leases ``services``' client is fenced by."""
    leases = [FenceLease(**dataclasses.asdict(lease)) for lease in fence_of(services)]
    return write.model_copy(update={"fence": leases}) if leases and not write.fence else write


async def enqueue(services: Services, write: SlackWrite) -> None:
    """Keep ``write`` until ``flush_outbox`` makes it (fenced as ``services`` is)."""
    write = _fenced_write(services, write)
    now = utcnow()
    entry = OutboxEntry(
        id=write.id, created_at=now, write=write.model_dump(mode="json"), next_try_at=now
    )
    await services.storage.put_outbox(entry)
    logger.info("kept a %s in %s for when Slack answers again", write.method, write.channel)


def new_write(**fields: Any) -> SlackWrite:
    """A ``SlackWrite`` with a fresh id."""
    return SlackWrite(id=uuid.uuid4().hex, **fields)


OWED_WAIT_SECONDS = 600.0
"""How long an owed answer waits through a storage outage to be kept before it is posted."""


async def post_owed(services: Services, *, channel: str, thread_ts: str, text: str) -> str | None:
    """Post an answer owed to a thread (a decided call's outcome) so a crash cannot lose it:
    kept in the outbox first (as an attempt already made, held by this instance for
    ``SENDING_SECONDS``), posted with its write's metadata, then removed. Killed in between,
    another instance makes the kept write later, and finds the message in the thread when the
    post had reached Slack. Returns the message's ts, or None when Slack is unreachable (the
    write stays kept and is made once Slack answers)."""
    write = new_write(method="chat.postMessage", channel=channel, thread_ts=thread_ts, text=text)
    write = _fenced_write(services, write)
    now = utcnow()
    entry = OutboxEntry(
        id=write.id,
        created_at=now,
        write=write.model_dump(mode="json"),
        attempts=1,  # whoever makes it after us looks for it in the thread first
        next_try_at=now + timedelta(seconds=SENDING_SECONDS),
    )
    storage = services.storage
    await waiting_out(
        services.outages,
        lambda: storage.put_outbox(entry),
        services=("storage",),
        seconds=OWED_WAIT_SECONDS,
    )
    try:
        response = await services.client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=text, metadata=write.metadata
        )
    except Exception as exc:
        if unavailable(exc) != "slack":
            await storage.remove_outbox(write.id)  # refused for good: nobody makes it
            raise
        services.outages.down("slack", exc)
        await storage.put_outbox(dataclasses.replace(entry, next_try_at=utcnow()))
        logger.info("kept an answer in %s for when Slack answers again", channel)
        return None
    await waiting_out(
        services.outages,
        lambda: storage.remove_outbox(write.id),
        services=("storage",),
        seconds=OWED_WAIT_SECONDS,
    )
    return str(response["ts"])


async def flush_outbox(services: Services, make_card: MakeCard | None = None) -> int:
    """Make every due write, oldest first; stops at the first Slack failure. Returns how
    many writes this pass made. ``make_card`` makes kept approval cards."""
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
            if not await _still_current(services, write):
                logger.info("dropped a kept %s: its run was taken over", write.method)
                await storage.remove_outbox(taken.id)
                continue
            await _make(services, write, make_card, uncertain=taken.attempts > 1)
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


async def _still_current(services: Services, write: SlackWrite) -> bool:
    """Whether every lease ``write`` was made under is still its holder's."""
    fence = StreamFence()
    for lease in write.fence:
        fence.hold(services.storage, HeldLease(**lease.model_dump()))
    return await fence.current()


async def _make(
    services: Services, write: SlackWrite, make_card: MakeCard | None, *, uncertain: bool
) -> None:
    client = services.client
    if write.method == "chat.update":  # the same update twice shows the same card: no check
        assert write.ts is not None
        await client.chat_update(
            channel=write.channel, ts=write.ts, text=write.text, blocks=write.blocks
        )
        return
    if write.method == "card":
        if make_card is None:
            raise RuntimeError("a kept card needs make_card to be posted")
        await make_card(services, write)
        return
    already = (
        uncertain
        and write.thread_ts is not None
        and await message_in_thread(services, write.channel, write.thread_ts, write.metadata)
    )
    if not already:
        await client.chat_postMessage(
            channel=write.channel,
            thread_ts=write.thread_ts,
            text=write.text,
            blocks=write.blocks,
            metadata=write.metadata,
        )


async def message_in_thread(
    services: Services, channel: str, thread_ts: str, metadata: dict[str, Any]
) -> str | None:
    """The ts of the message of the thread that carries exactly ``metadata``, if any (how a
    write whose earlier attempt may have reached Slack is found instead of posted again)."""
    replies = await services.client.conversations_replies(
        channel=channel, ts=thread_ts, include_all_metadata=True, limit=_THREAD_PAGE
    )
    for message in replies.get("messages") or []:
        if message.get("metadata") == metadata:
            return str(message.get("ts"))
    return None
