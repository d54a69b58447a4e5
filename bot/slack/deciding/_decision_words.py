"""Thread replies that look like a decision ("approve", "yes, go ahead", "decline").

Under a pending approval such a reply never decides and never reaches the model: the bot
points to the card's buttons (SPEC 12), where the rules, the fingerprint and the single-use
claim apply.
"""

from __future__ import annotations

import re

_WORDS = frozenset(
    [
        "approve",
        "approved",
        "approving",
        "yes",
        "yep",
        "yeah",
        "y",
        "ok",
        "okay",
        "lgtm",
        "sure",
        "go",
        "ahead",
        "do",
        "it",
        "ship",
        "it",
        "confirm",
        "confirmed",
        "accept",
        "accepted",
        "allow",
        "allowed",
        "granted",
        "proceed",
        "decline",
        "declined",
        "deny",
        "denied",
        "reject",
        "rejected",
        "no",
        "nope",
        "n",
        "cancel",
        "stop",
        "don't",
        "dont",
        "abort",
        "veto",
    ]
)
_MAX_WORDS = 6


def looks_like_decision(text: str) -> bool:
    """True for a short reply made of decision words ("approve", "Yes, go ahead!", "decline")."""
    words = re.findall(r"[a-z']+", text.lower())
    if not words or len(words) > _MAX_WORDS:
        return False
    deciding = sum(1 for w in words if w in _WORDS)
    return deciding >= max(1, (len(words) + 1) // 2)
