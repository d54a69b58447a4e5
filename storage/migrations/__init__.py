"""Alembic migrations of the SQL schema; applied by ``storage._migrate`` (no alembic.ini needed)."""
