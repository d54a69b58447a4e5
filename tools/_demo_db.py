"""``DemoDB``: the small tables the built-in example tools work on (records, orders, refunds,
tickets), created and seeded on first use.

The bot hands a ``DemoDB`` to the tool factories; tools never open databases themselves. Give
it the SQL URL of the configured storage (the tables then live next to countersign's own, in
the same database), or nothing for an in-process SQLite database that lives as long as the
process (what the bot uses with ``memory://`` or ``redis://`` storage).

Example:
    >>> db = DemoDB("sqlite+aiosqlite:///./data/countersign.db")
    >>> records = await db.list_records(limit=5)          # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from storage import DEFAULT_STORAGE_URL

SEEDED_RECORDS = 50
"""Records 1..50 exist in a fresh demo database (as do orders 1..50)."""

_SQL_SCHEMES = ("sqlite+aiosqlite", "postgresql+asyncpg")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_NAMES = ("Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Ent.")
_KINDS = ("customer", "supplier", "partner")

metadata = MetaData()
records = Table(
    "demo_records",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("name", String(120), nullable=False),
    Column("kind", String(40), nullable=False),
)
orders = Table(
    "demo_orders",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("customer", String(120), nullable=False),
    Column("total", Float, nullable=False),
)
refunds = Table(
    "demo_refunds",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("order_id", Integer, nullable=False),
    Column("amount", Float, nullable=False),
    Column("reason", String(500)),
    Column("idempotency_key", String(255), unique=True),
    Column("created_at", DateTime(timezone=True), server_default=func.now()),
)
tickets = Table(
    "demo_tickets",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("title", String(200), nullable=False),
    Column("priority", String(20), nullable=False),
    Column("idempotency_key", String(255), unique=True),
    Column("created_at", DateTime(timezone=True), server_default=func.now()),
)


def seed_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The records and orders of a fresh demo database."""
    recs = [
        {"id": i, "name": f"{_NAMES[i % len(_NAMES)]} #{i}", "kind": _KINDS[i % len(_KINDS)]}
        for i in range(1, SEEDED_RECORDS + 1)
    ]
    ords = [
        {"id": i, "customer": _NAMES[i % len(_NAMES)], "total": float(200 + 20 * i)}
        for i in range(1, SEEDED_RECORDS + 1)
    ]
    return recs, ords


def demo_database_url(storage_url: str | None) -> str | None:
    """Where the demo tables live for a ``STORAGE_URL``: the same SQL database, or None (an
    in-process SQLite database) for ``memory://`` and ``redis://`` storage."""
    url = storage_url or DEFAULT_STORAGE_URL
    return url if url.split("://", 1)[0] in _SQL_SCHEMES else None


class DemoDB:
    """The demo tables on an async SQLAlchemy engine (created and seeded on first use)."""

    def __init__(self, url: str | None = None) -> None:
        """``url``: ``sqlite+aiosqlite:///…`` or ``postgresql+asyncpg://…``; None: in-process."""
        self.url = url
        """Where the tables live (None: an in-process SQLite database)."""
        self._engine, self._schema = _engine(url)
        self._ready = False
        self._lock = asyncio.Lock()

    @property
    def engine(self) -> AsyncEngine:
        """The engine (for the tool modules' queries)."""
        return self._engine

    async def connect(self) -> AsyncConnection:
        """A connection with the tables in place; use as ``async with await db.connect()``."""
        await self.ensure()
        return self._engine.connect()

    async def ensure(self) -> None:
        """Create and seed the tables unless they exist."""
        if self._ready:
            return
        async with self._lock:
            if self._ready:
                return
            async with self._engine.begin() as conn:
                if self._schema is not None:
                    await conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{self._schema}"'))
                fresh = not await conn.run_sync(lambda sync: inspect(sync).has_table(records.name))
                await conn.run_sync(metadata.create_all)
                if fresh:
                    recs, ords = seed_rows()
                    await conn.execute(records.insert(), recs)
                    await conn.execute(orders.insert(), ords)
            self._ready = True

    async def count(self, table: Table) -> int:
        """How many rows ``table`` holds."""
        async with await self.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())

    async def close(self) -> None:
        """Dispose of the engine."""
        await self._engine.dispose()


def _engine(url: str | None) -> tuple[AsyncEngine, str | None]:
    if url is None:
        return create_async_engine("sqlite+aiosqlite://", poolclass=StaticPool), None
    parsed = make_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        connect_args["timeout"] = 30
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    raw = parsed.query.get("schema")
    schema = raw[-1] if isinstance(raw, tuple) else raw
    if schema:
        # countersign's own ``schema=`` option (storage): keep the demo tables there too.
        if not _IDENTIFIER.match(schema):
            raise ValueError(f"schema={schema!r} is not a plain SQL identifier")
        parsed = parsed.difference_update_query(["schema"])
        connect_args["server_settings"] = {"search_path": schema}
    return create_async_engine(parsed, connect_args=connect_args), schema or None
