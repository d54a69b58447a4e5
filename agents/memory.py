"""``Memory``: threads of messages kept in storage, so a conversation survives restarts.

Example:
    >>> from storage import InMemoryStorage
    >>> memory = Memory(storage=InMemoryStorage(), last_messages=40)
"""

from __future__ import annotations

from collections.abc import Sequence

from agents._ids import new_id
from agents._messages import Message
from storage import MessageRecord, Storage, ThreadRecord, utcnow

__all__ = ["Memory"]


class Memory:
    """Messages per ``thread_id``/``resource_id``; the agent reads the last ``last_messages``."""

    def __init__(self, storage: Storage | None = None, last_messages: int = 40) -> None:
        self.storage: Storage | None = storage
        """Where threads live; an agent fills it in with its own storage when None."""
        self.last_messages = last_messages
        """How many earlier messages of the thread the model sees."""

    def _store(self) -> Storage:
        if self.storage is None:
            raise RuntimeError(
                "Memory has no storage: pass Memory(storage=...) or give it to an Agent"
            )
        return self.storage

    async def history(self, thread_id: str, *, exclude_run_id: str | None = None) -> list[Message]:
        """The last ``last_messages`` messages of a thread, oldest first."""
        records = await self._store().list_messages(
            thread_id, limit=self.last_messages, exclude_run_id=exclude_run_id
        )
        messages = [Message.model_validate(r.content) for r in records]
        # A window must not start with tool results whose call it cut off.
        while messages and messages[0].role == "tool":
            messages.pop(0)
        return messages

    async def append(
        self,
        thread_id: str,
        resource_id: str | None,
        run_id: str | None,
        messages: Sequence[Message],
    ) -> None:
        """Append messages to a thread, creating the thread on first use."""
        store = self._store()
        now = utcnow()
        thread = await store.get_thread(thread_id)
        await store.save_thread(
            ThreadRecord(
                thread_id=thread_id,
                resource_id=resource_id,
                created_at=thread.created_at if thread else now,
                updated_at=now,
                metadata=thread.metadata if thread else {},
            )
        )
        await store.append_messages(
            [
                MessageRecord(
                    id=new_id(),
                    thread_id=thread_id,
                    resource_id=resource_id,
                    run_id=run_id,
                    role=m.role,
                    content=m.model_dump(mode="json", exclude_defaults=True),
                    created_at=now,
                )
                for m in messages
            ]
        )

    async def messages(self, thread_id: str) -> list[Message]:
        """Every message of a thread, oldest first."""
        records = await self._store().list_messages(thread_id)
        return [Message.model_validate(r.content) for r in records]
