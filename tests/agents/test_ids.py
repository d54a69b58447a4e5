"""Run, audit and message ids are random UUID4s in hex, as ``uuid.uuid4().hex`` makes them."""

from __future__ import annotations

import uuid

from agents._ids import new_id


def test_ids_are_distinct_random_uuid4_hex() -> None:
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        parsed = uuid.UUID(hex=text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert parsed.hex == text and len(text) == 32
    # every other bit varies: none of the random bits is stuck
    fixed = uuid.UUID(hex=ids[0]).int
    varying = 0
    for text in ids[1:]:
        varying |= uuid.UUID(hex=text).int ^ fixed
    assert bin(varying).count("1") == 122
