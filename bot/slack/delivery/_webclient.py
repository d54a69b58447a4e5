"""The Slack Web API client: retries 429s (honouring Retry-After), connection and 5xx errors."""

from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

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
