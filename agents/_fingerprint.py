"""``fingerprint``: binds a decision to the exact tool and arguments a person saw."""

from __future__ import annotations

import hashlib
import json
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""``canonical_json``'s encoder, built once (``json.dumps`` with options builds one per call)."""
_STRICT_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""``canonical_json`` that refuses NaN and Infinity (``strict_canonical_json``)."""


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 (non-ASCII kept as is)."""
    return _CANONICAL.encode(value)


def strict_canonical_json(value: Any) -> str:
    """``canonical_json``, raising ``ValueError`` on NaN or Infinity instead of writing them."""
    return _STRICT_CANONICAL.encode(value)


def fingerprint(tool_name: str, args: dict[str, Any], *, canonical_args: str | None = None) -> str:
    """SHA-256 hex of the canonical JSON of ``{"args": args, "tool": tool_name}``.

    ``canonical_args``: ``canonical_json(args)`` when the caller has it already (the run loop
    encodes a model's arguments once, to check them and to fingerprint them).

    Example:
        >>> fingerprint("delete_record", {"id": "abc-123"})[:12]
        'b6a13fb8c10a'
    """
    if canonical_args is None:
        canonical_args = canonical_json(args)
    # What canonical_json({"args": args, "tool": tool_name}) writes: its keys in sorted order.
    document = f'{{"args":{canonical_args},"tool":{canonical_json(tool_name)}}}'
    return hashlib.sha256(document.encode("utf-8")).hexdigest()
