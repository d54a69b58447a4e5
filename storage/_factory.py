"""``create_storage(url)``: pick a backend by URL scheme."""

from __future__ import annotations

from storage._errors import StorageConfigError
from storage._memory import InMemoryStorage
from storage._protocol import Storage

DEFAULT_STORAGE_URL = "sqlite+aiosqlite:///./data/countersign.db"
"""Where runs live when ``STORAGE_URL`` is unset."""


def create_storage(url: str | None = None, *, durable_claims: bool = True) -> Storage:
    """Open the backend named by ``url`` (default: SQLite at ``./data/countersign.db``).

    ``memory://``, ``sqlite+aiosqlite:///path.db``, ``postgresql+asyncpg://…``, ``redis://…``.
    ``durable_claims=False`` lets SQLite commit claims at ``synchronous = NORMAL`` like every
    other write (only for benchmarks that compare with peers doing so; see ``SQLStorage``).
    """
    url = url or DEFAULT_STORAGE_URL
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme == "memory":
        return InMemoryStorage()
    if scheme in ("sqlite+aiosqlite", "postgresql+asyncpg"):
        from storage.sql._storage import SQLStorage

        return SQLStorage(url, durable_claims=durable_claims)
    if scheme in ("redis", "rediss"):
        from storage.redis._storage import RedisStorage

        return RedisStorage.from_url(url)
    raise StorageConfigError(
        f"STORAGE_URL {_redact(url)!r} names no storage backend: use memory://, "
        "sqlite+aiosqlite:///path.db, postgresql+asyncpg://user@host/db or redis://host:6379/0"
    )


def _redact(url: str) -> str:
    """Hide a password in a URL before it reaches a message or a log."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}" if ":" in creds else url
    return url
