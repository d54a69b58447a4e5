"""The Slack edge's own records: ``cards`` and ``outbox`` tables, filled from where they were.

- ``cards``: where each call's card was posted, one row per ``(run_id, tool_call_id)``. Filled
  from the newest ``presented`` audit event of each call (the events stay: presentations are
  audited); a card recorded before cards stored their workspace gets the ``<team>`` of its
  thread id (``slack:<team>:<channel>:<ts>``).
- ``outbox``: Slack writes still to make. Filled from the messages of the memory thread
  ``countersign:slack-outbox``, except writes with a ``slack:outbox:done:<id>`` mark (made) and
  writes older than that mark's 30 days (made, or stale); then that thread, its messages and
  the ``slack:outbox:*`` marks are deleted.

Downgrade drops both tables (the audit events still say where the cards are).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from alembic import op

from storage.sql._schema import UTCDateTime

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(255)
_OUTBOX_THREAD = "countersign:slack-outbox"
_DONE_MARK = "slack:outbox:done:"
_DONE_DAYS = 30
_WHERE = ("channel", "ts", "thread_ts", "team")
"""The keys of a ``presented`` event's data that became columns (the rest is ``shown``)."""

_audit = sa.table(
    "audit",
    sa.column("seq", sa.Integer()),
    sa.column("at", UTCDateTime()),
    sa.column("kind", sa.String()),
    sa.column("run_id", _ID),
    sa.column("tool_call_id", _ID),
    sa.column("thread_id", _ID),
    sa.column("data", sa.JSON()),
)
_messages = sa.table(
    "messages",
    sa.column("seq", sa.Integer()),
    sa.column("id", _ID),
    sa.column("thread_id", _ID),
    sa.column("content", sa.JSON()),
    sa.column("created_at", UTCDateTime()),
)
_threads = sa.table("threads", sa.column("thread_id", _ID))
_kv = sa.table("kv", sa.column("key", _ID))


def upgrade() -> None:
    cards = op.create_table(
        "cards",
        sa.Column("run_id", _ID, nullable=False),
        sa.Column("tool_call_id", _ID, nullable=False),
        sa.Column("team", _ID, nullable=False),
        sa.Column("channel", _ID, nullable=False),
        sa.Column("ts", sa.String(64), nullable=False),
        sa.Column("thread_ts", sa.String(64), nullable=False),
        sa.Column("posted_at", UTCDateTime(), nullable=False),
        sa.Column("shown", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "tool_call_id", name="pk_cards"),
    )
    op.create_index("ix_cards_posted_at", "cards", ["posted_at"])
    outbox = op.create_table(
        "outbox",
        sa.Column("id", _ID, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("write", sa.JSON(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_try_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
    )
    op.create_index("ix_outbox_created_at_id", "outbox", ["created_at", "id"])
    assert cards is not None and outbox is not None
    bind = op.get_bind()
    found = _cards(bind)
    if found:
        bind.execute(cards.insert(), found)
    writes = _writes(bind)
    if writes:
        bind.execute(outbox.insert(), writes)
    bind.execute(_messages.delete().where(_messages.c.thread_id == _OUTBOX_THREAD))
    bind.execute(_threads.delete().where(_threads.c.thread_id == _OUTBOX_THREAD))
    bind.execute(_kv.delete().where(_kv.c.key.like("slack:outbox:%")))


def _cards(bind: sa.Connection) -> list[dict[str, Any]]:
    """The newest ``presented`` event of each call, as a ``cards`` row."""
    newest: dict[tuple[str, str], dict[str, Any]] = {}
    rows = bind.execute(
        sa.select(_audit.c.at, _audit.c.run_id, _audit.c.tool_call_id, _audit.c.thread_id)
        .add_columns(_audit.c.data)
        .where(_audit.c.kind == "presented")
        .order_by(_audit.c.at, _audit.c.seq)
    )
    for at, run_id, tool_call_id, thread_id, data in rows:
        if not run_id or not tool_call_id or not isinstance(data, dict):
            continue
        if not data.get("channel") or not data.get("ts"):
            continue
        newest[(run_id, tool_call_id)] = {
            "run_id": run_id,
            "tool_call_id": tool_call_id,
            "team": str(data.get("team") or _team_of(thread_id)),
            "channel": str(data["channel"]),
            "ts": str(data["ts"]),
            "thread_ts": str(data.get("thread_ts") or data["ts"]),
            "posted_at": at,
            "shown": {k: v for k, v in data.items() if k not in _WHERE},
        }
    return list(newest.values())


def _team_of(thread_id: str | None) -> str:
    parts = (thread_id or "").split(":")
    return parts[1] if len(parts) == 4 and parts[0] == "slack" else "unknown"


def _writes(bind: sa.Connection) -> list[dict[str, Any]]:
    """The outbox thread's writes not made yet, as ``outbox`` rows."""
    done = {
        key[len(_DONE_MARK) :]
        for (key,) in bind.execute(sa.select(_kv.c.key).where(_kv.c.key.like(f"{_DONE_MARK}%")))
    }
    stale = datetime.now(UTC) - timedelta(days=_DONE_DAYS)
    rows = bind.execute(
        sa.select(_messages.c.id, _messages.c.content, _messages.c.created_at)
        .where(_messages.c.thread_id == _OUTBOX_THREAD)
        .order_by(_messages.c.seq)
    )
    writes: dict[str, dict[str, Any]] = {}
    for message_id, content, created_at in rows:
        if not isinstance(content, dict):
            continue
        write_id = str(content.get("id") or message_id)
        if write_id in done or created_at < stale:
            continue
        writes[write_id] = {
            "id": write_id,
            "created_at": created_at,
            "write": content,
            "attempts": 0,
            "next_try_at": created_at,
        }
    return list(writes.values())


def downgrade() -> None:
    op.drop_index("ix_outbox_created_at_id", table_name="outbox")
    op.drop_table("outbox")
    op.drop_index("ix_cards_posted_at", table_name="cards")
    op.drop_table("cards")
