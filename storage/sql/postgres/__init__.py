"""PostgreSQL's decision path: one statement calling a schema function per state change, on
the asyncpg connection."""
