"""One delivery path for a run, fenced like storage (SPEC 3.4, issue 33).

Everything the bot tells Slack about a run it drives (card updates, the result, the answer,
streamed text, the compact grant line, batch rows, the status line) goes through the Web API
client of its ``Services``. ``fenced(services, stream)`` gives a copy whose client checks the
run's ``AgentStream.fence`` right before each write: once another instance took the run's work
over (a claim's lease epoch moved on), the write is not sent and ``Superseded`` is raised, so
the paused or cut-off owner that wakes up tells nobody anything; the instance that took over
sends the call's one outcome. Reads (``conversations.replies``, ``auth.test``) are never fenced.

The check is one storage read per write while the stream holds a lease, none otherwise (a
message's first run holds no claim). A write whose check cannot reach storage is not sent
either (``StorageUnavailable``): what cannot be checked waits, as every caller's outage
handling already does for a write storage refused.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from agents import AgentStream, HeldLease, StreamFence
from bot.slack._services import Services

logger = logging.getLogger(__name__)

FENCED_METHODS = frozenset(
    {
        "chat.postMessage",
        "chat.update",
        "chat.delete",
        "chat.startStream",
        "chat.appendStream",
        "chat.stopStream",
        "chat.postEphemeral",
        "assistant.threads.setStatus",
    }
)
"""The Web API methods that tell someone something: checked against the fence first."""


class Superseded(Exception):
    """A write for a run whose work another instance took over: not sent."""

    def __init__(self, run_id: str, method: str) -> None:
        self.run_id = run_id
        self.method = method
        super().__init__(
            f"not sending {method} for run {run_id}: another instance took its work over "
            "and sends its outcome"
        )


class FencedWebClient(AsyncWebClient):
    """A view of a bot's ``AsyncWebClient`` (same token, session, retries) whose writes are
    checked against a run's ``StreamFence`` before they are sent."""

    def __init__(self, base: AsyncWebClient, fence: StreamFence, run_id: str) -> None:
        # No super().__init__: the same settings and session as ``base``, not new ones.
        self.__dict__.update(base.__dict__)
        self.fence = fence
        """The fence every write is checked against."""
        self.run_id = run_id
        """The run the writes are for."""

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
        """``AsyncWebClient.api_call``, refused with ``Superseded`` for a write once the run's
        work was taken over."""
        if api_method in FENCED_METHODS and not await self.fence.current():
            logger.info("run %s was taken over: not sending %s", self.run_id, api_method)
            raise Superseded(self.run_id, api_method)
        return await super().api_call(api_method, **kwargs)


def fenced(services: Services, stream: AgentStream) -> Services:
    """``services`` whose Web API client sends nothing for ``stream``'s run once its work was
    taken over (unchanged when it is fenced for that stream already)."""
    client = services.client
    if isinstance(client, FencedWebClient) and client.fence is stream.fence:
        return services
    base = client
    return dataclasses.replace(services, client=FencedWebClient(base, stream.fence, stream.run_id))


def fence_of(services: Services) -> tuple[HeldLease, ...]:
    """The leases ``services``' writes are fenced by (none for an unfenced client): an
    outbox entry kept for later carries them, and is dropped if they were taken over."""
    client = services.client
    return client.fence.leases if isinstance(client, FencedWebClient) else ()
