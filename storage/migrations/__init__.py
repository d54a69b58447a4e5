"""Alembic migrations of the SQL schema; applied by ``storage.sql._migrate`` (no alembic.ini
needed)."""
