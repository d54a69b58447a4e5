"""Checkpoints of the decision path's SQLite connection, kept out of a durable claim's commit.

SQLite checkpoints the write-ahead log inside whichever commit takes it past
``wal_autocheckpoint`` frames (1,000 by default): that commit then syncs the log, copies its
pages into the database file and syncs that file too (and grows it: a journal commit of the
file system). A claim's commit runs at ``synchronous = FULL`` and should cost one sync of the
log, no more, so the decision path's connection runs with ``wal_autocheckpoint = 0`` and
``Checkpoints.before_write`` runs a ``PASSIVE`` checkpoint just before an ordinary (``NORMAL``)
write instead, about every ``CHECKPOINT_FRAMES`` frames. Other connections (migrations, another
process on the same file) keep SQLite's automatic checkpoints.
"""

from __future__ import annotations

import logging
import sqlite3

logger = logging.getLogger(__name__)

CHECKPOINT_FRAMES = 1000
"""Frames the log may hold before an ordinary write checkpoints it (SQLite's default)."""
MAX_WRITES_BETWEEN = 256
"""At most this many writes between two checkpoints, however small they are."""
_FIRST_AFTER = 16
"""Writes before the first checkpoint, which measures how many frames a write adds."""


class Checkpoints:
    """When the decision path's connection checkpoints: never in a durable commit."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA wal_autocheckpoint = 0")  # no checkpoint inside any commit
        self._every = _FIRST_AFTER
        self._since = 0

    def before_write(self, conn: sqlite3.Connection, *, durable: bool) -> None:
        """Count a write about to start; before an ordinary one, checkpoint when the log is due.

        Before, not after: the first write after a checkpoint restarts the log and syncs its
        new header, and that write is then this ordinary one, never a durable claim. The
        interval adapts to the frames the last checkpoint found per write, so the log stays
        near ``CHECKPOINT_FRAMES`` whatever the writes' size. A checkpoint that fails (another
        connection checkpointing the same file) is left to the next one.
        """
        self._since += 1
        if durable or self._since <= self._every:
            return
        try:
            row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            logger.debug("SQLite checkpoint skipped: %s", exc)
            return
        frames = row[1] if row and row[1] > 0 else 0
        per_write = max(frames, 1) / (self._since - 1)
        self._every = max(1, min(MAX_WRITES_BETWEEN, int(CHECKPOINT_FRAMES / per_write)))
        self._since = 1

    @staticmethod
    def release(conn: sqlite3.Connection) -> None:
        """Give ``conn`` SQLite's automatic checkpoints back (before it returns to its pool)."""
        conn.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_FRAMES}")
