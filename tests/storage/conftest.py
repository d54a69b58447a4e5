"""The ``storage_url`` / ``storage`` fixtures: every backend, isolated per test (tests/backends)."""

from tests.backends import storage, storage_url

__all__ = ["storage", "storage_url"]
