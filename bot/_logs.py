"""Logging setup; keeps request bodies and secrets out of the logs.

slack-bolt logs the whole request body (at INFO) when a signature is invalid: that logger is
raised to WARNING and given a filter that drops any record carrying a body.
"""

from __future__ import annotations

import logging

from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped

from bot.ops import JsonFormatter

_VERIFICATION_LOGGERS = (
    "slack_bolt.AsyncRequestVerification",
    "slack_bolt.RequestVerification",
)


class _DropBodies(logging.Filter):
    """Refuses records that would print a request body."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "body:" not in record.getMessage()


def redact_bolt_logs() -> None:
    """Silence bolt's body-logging verification loggers (call after building an ``AsyncApp``),
    and bolt's start-up notice that the token is unused: bolt reads ``SLACK_BOT_TOKEN`` from
    the environment by itself and then warns that the client we give it (made from the same
    token) wins — true, by design, and nothing a newcomer should wonder about."""
    for name in _VERIFICATION_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.WARNING)
        if not any(isinstance(f, _DropBodies) for f in logger.filters):
            logger.addFilter(_DropBodies())
    app_logger = logging.getLogger(_BOLT_APP_LOGGER)
    if not any(isinstance(f, _DropTokenNotice) for f in app_logger.filters):
        app_logger.addFilter(_DropTokenNotice())


_BOLT_APP_LOGGER = "slack_bolt.AsyncApp"


class _DropTokenNotice(logging.Filter):
    """Drops bolt's "As you gave `client` as well, `token` will be unused." (only that)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


def configure_logging(level: str, log_format: str = "text") -> None:
    """Root logging at ``level`` with one line per record (``json``: one JSON object per line);
    ``warnings`` go through logging too. Call again to change the level or the format."""
    handler = logging.StreamHandler()
    handler.setFormatter(
        JsonFormatter()
        if log_format == "json"
        else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.captureWarnings(True)
    if logging.getLogger().getEffectiveLevel() >= logging.INFO:
        # Alembic narrates every plugin and migration step at INFO; keep start-up readable.
        logging.getLogger("alembic").setLevel(logging.WARNING)
    redact_bolt_logs()
