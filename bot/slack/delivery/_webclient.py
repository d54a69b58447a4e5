"""The Slack Web API client: retries 429s (honouring Retry-After), connection and 5xx errors;
``redraw``: a card updated in place, a refusal logged."""

from __future__ import annotations

import copy
import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"


def create_web_client(token: str | None, *, api_url: str | None = None) -> AsyncWebClient:
    """An ``AsyncWebClient`` for ``token``; ``api_url`` (``SLACK_API_URL``) overrides the base."""
    return AsyncWebClient(
        token=token,
        base_url=api_url or DEFAULT_API_URL,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
            AsyncRateLimitErrorRetryHandler(max_retry_count=3),
            AsyncServerErrorRetryHandler(max_retry_count=1),
        ],
    )


def without_rate_limit_retries(client: AsyncWebClient) -> AsyncWebClient:
    """``client`` without the SDK's 429 retries (it sleeps ``Retry-After`` inside the call):
    for callers that pace themselves and must see the 429 (the Home tab queue)."""
    copied = copy.copy(client)
    copied.retry_handlers = [
        h for h in client.retry_handlers if not isinstance(h, AsyncRateLimitErrorRetryHandler)
    ]
    return copied


async def redraw(
    client: AsyncWebClient,
    *,
    channel: str,
    ts: str,
    text: str,
    blocks: list[dict[str, Any]],
    what: str = "card",
) -> bool:
    """Update the message ``ts`` (a card) to ``text`` / ``blocks``; Slack refusing it (the
    message gone, …) is logged and the message stays as it was: False."""
    try:
        await client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks)
    except SlackApiError as exc:
        logger.warning("could not update %s %s: %s", what, ts, exc.response.get("error"))
        return False
    return True
