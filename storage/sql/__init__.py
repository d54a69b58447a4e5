"""``SQLStorage``: the protocol on SQLAlchemy's async engine (SQLite and PostgreSQL), its schema,
migrations, pruning, and each driver's decision path (``sqlite/``, ``postgres/``)."""
