"""``StreamSupport``: whether this workspace takes ``chat.startStream``, learnt once.

The first streaming call Slack refuses as not available (an older workspace, a method the token
may not use, the feature off) switches this process to posting and updating messages, for
good: the refusal is remembered, never shown, never tried again on every answer.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

NOT_AVAILABLE = frozenset(
    {
        "unknown_method",
        "not_allowed",
        "not_allowed_token_type",
        "feature_not_enabled",
        "method_deprecated",
        "not_implemented",
        "team_not_allowed",
        "method_not_supported_for_channel_type",
    }
)
"""Slack errors that mean "no streaming here" (not a failure of this one answer)."""


class StreamSupport:
    """Whether answers are streamed; off once Slack said streaming is not available."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled

    @property
    def enabled(self) -> bool:
        """True until Slack refused streaming (or when built disabled)."""
        return self._enabled

    def refused(self, error: str) -> bool:
        """Note Slack's ``error`` to a streaming call; True when it means streaming is not
        available (then it stays off in this process)."""
        if error not in NOT_AVAILABLE:
            return False
        if self._enabled:
            logger.info("Slack does not stream answers here (%s): posting and updating", error)
        self._enabled = False
        return True
