"""Slack identifiers the bot registers: action ids, events, scopes.

Shared with the tests, which check them against ``manifest.yml``.
"""

from __future__ import annotations

APPROVE_ACTION = "approval:approve"
"""``action_id`` of the Approve button (style primary)."""
DECLINE_ACTION = "approval:decline"
"""``action_id`` of the Decline button (style danger)."""
EDIT_ACTION = "approval:edit"
"""``action_id`` of the Edit button: a modal to change the arguments, then approve."""
PROVIDE_ACTION = "suspension:provide"
"""``action_id`` of "Provide details" on a suspended call's question."""
WITHDRAW_ACTION = "approval:withdraw"
"""``action_id`` of the Withdraw button: only the call's requester may use it."""
SHOW_ALL_ACTION = "approval:show-all"
"""``action_id`` of "Show all" under arguments cut to fit: a modal with every argument."""
APPROVE_ALL_ACTION = "approval:approve-all"
"""``action_id`` of "Approve all N" on a batch card: every pending call of it, all or nothing."""
DECLINE_ALL_ACTION = "approval:decline-all"
"""``action_id`` of "Decline all N" on a batch card."""
ROW_ACTION = "approval:row"
"""``action_id`` of a batch card row's overflow menu: approve, edit, decline, show all or
withdraw that one call (the chosen option's value names it)."""
GRANT_ACTION = "approval:approve-grant"
"""``action_id`` of "Approve and allow…" on a card whose rule allows standing grants (SPEC 15):
a modal to approve with a grant."""
ASK_AGAIN_ACTION = "approval:ask-again"
"""``action_id`` of "Ask again" on an expired card: its requester presents the same call anew."""
EXTEND_ACTION = "approval:extend"
"""``action_id`` of "Extend" on a pending card whose rule allows more time (``max_ttl_seconds``
above its TTL): who may approve it moves its ``expires_at`` (SPEC 12)."""
REVOKE_GRANT_ACTION = "grant:revoke"
"""``action_id`` of Revoke on an auto-approved call's line and on the Home tab's grants."""
CARD_ACTIONS = (APPROVE_ACTION, EDIT_ACTION, DECLINE_ACTION, WITHDRAW_ACTION)
"""The buttons of an approval card (and "Approve and allow…" where grants are allowed)."""
BATCH_ACTIONS = (APPROVE_ALL_ACTION, DECLINE_ALL_ACTION)
"""The buttons deciding every call of a batch card."""
ACTION_IDS = (
    *CARD_ACTIONS,
    *BATCH_ACTIONS,
    ROW_ACTION,
    PROVIDE_ACTION,
    SHOW_ALL_ACTION,
    GRANT_ACTION,
    REVOKE_GRANT_ACTION,
    ASK_AGAIN_ACTION,
    EXTEND_ACTION,
)
"""Every ``action_id`` a listener is registered for."""

DECLINE_VIEW = "approval:decline-modal"
"""``callback_id`` of the decline modal (optional reason)."""
EDIT_VIEW = "approval:edit-modal"
"""``callback_id`` of the edit-then-approve modal."""
PROVIDE_VIEW = "suspension:provide-modal"
"""``callback_id`` of the "Provide details" modal."""
GRANT_VIEW = "approval:grant-modal"
"""``callback_id`` of the "Approve and allow…" modal (duration, uses, scope, free arguments)."""
VIEW_CALLBACK_IDS = (DECLINE_VIEW, EDIT_VIEW, PROVIDE_VIEW, GRANT_VIEW)
"""Every ``view_submission`` ``callback_id`` a listener is registered for."""
REASON_BLOCK = "reason"
"""``block_id`` of the reason input of the decline modal."""

APPROVAL_BLOCK = "approval-actions"
"""``block_id`` of the card's buttons (a batch card's row: ``approval-actions:<n>``)."""
BATCH_BLOCK = "batch"
"""``block_id`` prefix of a batch card's own blocks ("Approve all", "Show all" of a row)."""
SUSPENSION_BLOCK = "suspension-actions"
"""``block_id`` of the "Provide details" button under a question."""

LISTENED_EVENTS = (
    "app_context_changed",
    "app_home_opened",
    "app_mention",
    "assistant_thread_context_changed",
    "assistant_thread_started",
    "message",
)
"""Event types with a listener (both views': the agent view's and the legacy assistant view's)."""

BOT_EVENTS = (
    "app_context_changed",
    "app_home_opened",
    "app_mention",
    "message.channels",
    "message.groups",
    "message.im",
    "subteam_members_changed",
    "subteam_updated",
)
"""Event subscriptions in ``manifest.yml`` (Slack's agent messaging experience, ``agent_view``):
the Home tab and the Messages tab (``app_home_opened``, ``tab`` ``home`` / ``messages``: the
suggested prompts), what the person looks at (``app_context_changed``: acknowledged), mentions,
thread replies, direct messages (each a conversation with the agent), and user-group changes
(approvers given as ``S…`` ids are looked up again at once)."""

ASSISTANT_VIEW_EVENTS = (
    "app_home_opened",
    "app_mention",
    "assistant_thread_context_changed",
    "assistant_thread_started",
    "message.channels",
    "message.groups",
    "message.im",
    "subteam_members_changed",
    "subteam_updated",
)
"""Event subscriptions in ``manifest.assistant-view.yml`` (the legacy ``assistant_view``): its
assistant threads (``assistant_thread_started``: title and suggested prompts;
``assistant_thread_context_changed``: acknowledged) in place of the Messages tab's events."""

BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "chat:write",
    "groups:history",
    "im:history",
    "usergroups:read",
    "users:read",
)
"""OAuth bot scopes in both manifests, each used by the bot:

- ``app_mentions:read``: the ``app_mention`` event;
- ``assistant:write``: ``assistant.threads.setSuggestedPrompts`` (the Messages tab's prompts, a
  legacy assistant thread's), ``setTitle``, ``setStatus``; the legacy view's events;
- ``channels:history`` / ``groups:history``: thread replies (``message.channels``/``.groups``);
- ``im:history``: direct messages (``message.im``);
- ``chat:write``: ``chat.postMessage``, ``chat.update``, ``chat.postEphemeral``, and the
  streamed answers (``chat.startStream`` / ``appendStream`` / ``stopStream``);
- ``usergroups:read``: ``usergroups.users.list`` for user groups (``S…``) in ``APPROVERS``, and
  ``usergroups.list`` for their handles in plain text;
- ``users:read``: ``users.info``, a person's name where Slack shows no mention as a name (the
  status line is plain text), cached.

``views.open`` (the modals), ``views.publish`` (the Home tab), ``chat.getPermalink`` (its links
to threads) and the ``app_home_opened`` / ``app_context_changed`` events need no scope.
"""


def thread_id(team: str, channel: str, thread_ts: str) -> str:
    """The memory thread of a Slack thread: ``slack:<team>:<channel>:<thread_ts>``."""
    return f"slack:{team}:{channel}:{thread_ts}"


def resource_id(team: str, channel: str) -> str:
    """The memory resource of a Slack channel: ``slack:<team>:<channel>``."""
    return f"slack:{team}:{channel}"
