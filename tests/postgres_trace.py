"""Every statement a ``SQLStorage`` sends PostgreSQL, read off the wire (``bench._pg_wire``):
what SQLAlchemy sends and what ``storage.sql.postgres._decision_path`` runs on the driver, alike."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from bench._pg_wire import WireTap
from storage import SQLStorage


def traced_postgres(url: str) -> tuple[SQLStorage, WireTap]:
    """A ``SQLStorage`` at ``url`` whose every connection reports to the returned tap
    (attach before the store's first use: connections opened earlier are not traced)."""
    store = SQLStorage(url)
    tap = WireTap()

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        tap.attach(dbapi_connection.driver_connection)

    event.listen(store.engine.sync_engine, "connect", on_connect)
    return store, tap
