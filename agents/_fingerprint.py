"""``fingerprint``: binds a decision to the exact tool and arguments a person saw."""

from __future__ import annotations

import hashlib
import json
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""``canonical_json``'s encoder, built once (``json.dumps`` with options builds one per call)."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 (non-ASCII kept as is)."""
    return _CANONICAL.encode(value)


def fingerprint(tool_name: str, args: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of ``{"args": args, "tool": tool_name}``.

    Example:
        >>> fingerprint("delete_record", {"id": "abc-123"})[:12]
        'b6a13fb8c10a'
    """
    document = canonical_json({"args": args, "tool": tool_name})
    return hashlib.sha256(document.encode("utf-8")).hexdigest()
