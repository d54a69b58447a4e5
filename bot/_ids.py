"""Slack identifiers the bot registers: action ids, events, scopes.

Shared with the tests, which check them against ``manifest.yml``.
"""

from __future__ import annotations

APPROVE_ACTION = "approval:approve"
"""``action_id`` of the Approve button (style primary)."""
DECLINE_ACTION = "approval:decline"
"""``action_id`` of the Decline button (style danger)."""
ACTION_IDS = (APPROVE_ACTION, DECLINE_ACTION)
"""Every ``action_id`` a listener is registered for."""

APPROVAL_BLOCK = "approval-actions"
"""``block_id`` of the card's buttons."""

LISTENED_EVENTS = ("app_mention", "message")
"""Event types with a listener."""

BOT_EVENTS = ("app_mention", "message.channels", "message.groups", "message.im")
"""Event subscriptions in ``manifest.yml``: mentions, thread replies, DMs."""

BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "chat:write",
    "groups:history",
    "im:history",
)
"""OAuth bot scopes in ``manifest.yml``, each used by the bot:

- ``app_mentions:read``: the ``app_mention`` event;
- ``channels:history`` / ``groups:history``: thread replies (``message.channels``/``.groups``);
- ``im:history``: direct messages (``message.im``);
- ``chat:write``: ``chat.postMessage``, ``chat.update``, ``chat.postEphemeral``.
"""


def thread_id(team: str, channel: str, thread_ts: str) -> str:
    """The memory thread of a Slack thread: ``slack:<team>:<channel>:<thread_ts>``."""
    return f"slack:{team}:{channel}:{thread_ts}"


def resource_id(team: str, channel: str) -> str:
    """The memory resource of a Slack channel: ``slack:<team>:<channel>``."""
    return f"slack:{team}:{channel}"
