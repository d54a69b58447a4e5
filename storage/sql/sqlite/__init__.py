"""SQLite's decision path on the standard ``sqlite3`` driver, and aiosqlite run inline."""
