"""Values as the column types of ``storage.sql._schema`` store them on SQLite, for the plain SQL
of ``storage.sql.sqlite`` (the decision path, grants): a row written there reads back
identically through SQLAlchemy and the other way round."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from storage._codec import stamp

_ENCODER = json.JSONEncoder(separators=(",", ":"))
"""Built once: ``json.dumps`` with any option builds a new encoder on every call."""


def json_text(value: object) -> str:
    """A JSON column's text (``sa.JSON`` stores Python ``None`` as JSON ``null`` too)."""
    return _ENCODER.encode(value)


def timestamp(value: datetime) -> str:
    """``UTCDateTime`` on SQLite: naive UTC text with microseconds, so text order is time order."""
    if value.tzinfo is not UTC:  # storage.utcnow() gives UTC already; a naive one is refused
        value = stamp(value)
    return value.replace(tzinfo=None).isoformat(" ", "microseconds")


def optional_timestamp(value: datetime | None) -> str | None:
    """``timestamp``, None kept."""
    return None if value is None else timestamp(value)


def parse_time(text: str) -> datetime:
    """The aware UTC datetime of a ``timestamp`` text."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)
