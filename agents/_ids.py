"""``new_id``: the random ids of runs, audit events and memory messages."""

from __future__ import annotations

import os

_VERSION_4 = 0x4000 << 64
"""The version nibble (4: random) in the ``time_hi_and_version`` field of a UUID."""
_VARIANT_RFC_4122 = 0x8000 << 48
"""The variant bits (``10``: RFC 4122) at the top of the ``clock_seq`` field."""
_FIXED = (0xF000 << 64) | (0xC000 << 48)
"""The bits the two above replace."""


def new_id() -> str:
    """A random UUID4 as 32 hex digits: what ``uuid.uuid4().hex`` returns (the same 122 random
    bits from ``os.urandom``), without building a ``UUID`` object, which costs as much again.
    An approval cycle makes four.
    """
    random = int.from_bytes(os.urandom(16)) & ~_FIXED
    return f"{random | _VERSION_4 | _VARIANT_RFC_4122:032x}"
