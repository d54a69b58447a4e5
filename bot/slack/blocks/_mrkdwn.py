"""Escaping and truncating untrusted text for Slack ``mrkdwn``.

``&``, ``<`` and ``>`` are Slack's control characters: escaped, an injected ``<!channel>``,
``<@U…>`` or ``<https://evil|innocent>`` shows as text. Truncation happens after escaping and
never cuts an entity in half.
"""

from __future__ import annotations

ELLIPSIS = "…"
_ENTITY_MAX = len("&amp;")


def escape(text: str) -> str:
    """Escape Slack's control characters (``&`` first)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def truncate_escaped(text: str, limit: int) -> str:
    """Cut already-escaped ``text`` to ``limit`` characters (ellipsis included), entity-safe."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    amp = cut.rfind("&", max(0, len(cut) - _ENTITY_MAX + 1))
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + ELLIPSIS


def escape_truncated(text: str, limit: int) -> str:
    """Escape untrusted ``text`` and fit it in ``limit`` characters."""
    return truncate_escaped(escape(text), limit)


def code_block(text: str, limit: int) -> str:
    """Untrusted ``text`` as a fenced code block of at most ``limit`` characters."""
    fence = "```"
    body = escape(text.replace(fence, "`\u200b``"))
    return fence + truncate_escaped(body, limit - 2 * len(fence)) + fence


def mention(user_id: str | None) -> str:
    """``<@U…>`` for a Slack user id, or an escaped name for anything else."""
    if user_id and user_id[:1] in ("U", "W") and user_id.isalnum():
        return f"<@{user_id}>"
    return escape(user_id or "someone")
