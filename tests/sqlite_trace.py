"""Every statement SQLite runs for a ``SQLStorage``, seen at the driver (``sqlite3``'s trace
callback): what SQLAlchemy sends and what ``storage.sql.sqlite._decision_path`` runs directly,
alike."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event

from storage import SQLStorage


@dataclass
class Trace:
    """The statements run so far (``BEGIN IMMEDIATE`` opens a write transaction)."""

    statements: list[str] = field(default_factory=list)

    @property
    def write_transactions(self) -> int:
        return self.statements.count("BEGIN IMMEDIATE")

    @property
    def commits(self) -> int:
        return self.statements.count("COMMIT")

    @contextmanager
    def counting(self) -> Iterator[Trace]:
        """A ``Trace`` of what runs inside the ``with`` block only."""
        start = len(self.statements)
        part = Trace()
        try:
            yield part
        finally:
            part.statements = self.statements[start:]


def traced_sqlite(url: str) -> tuple[SQLStorage, Trace]:
    """A ``SQLStorage`` on a SQLite file whose every connection reports to the returned trace
    (attach before the store's first use: connections opened earlier are not traced)."""
    store = SQLStorage(url)
    trace = Trace()

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.driver_connection.sqlite3_connection.set_trace_callback(
            lambda sql: trace.statements.append(sql.strip())
        )

    event.listen(store.engine.sync_engine, "connect", on_connect)
    return store, trace
