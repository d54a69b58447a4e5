"""Alembic environment: runs on the connection ``storage.sql._migrate`` hands over.

Run migrations with ``python -m storage upgrade`` (or let ``SQLStorage`` do it on first use);
the ``alembic`` command line is not wired up because no alembic.ini exists.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from storage.sql._schema import VERSION_TABLE, metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "storage migrations need a live connection: run `python -m storage upgrade --url URL` "
        "instead of the alembic command line"
    )
context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
