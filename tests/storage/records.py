"""Record builders for the storage contract tests (fixed clock, unique-enough defaults)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from storage import AuditEvent, ClaimRecord, MessageRecord, SnapshotRecord

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""The tests' epoch: every timestamp is ``T0`` plus whole seconds."""


def at(seconds: float) -> datetime:
    """``T0`` plus ``seconds``."""
    return T0 + timedelta(seconds=seconds)


def snapshot(run_id: str, *, version: int = 1, second: float = 0, **fields: Any) -> SnapshotRecord:
    """A snapshot of ``run_id`` suspended ``second`` seconds after ``T0``."""
    defaults: dict[str, Any] = {
        "agent_id": "ops",
        "thread_id": None,
        "resource_id": None,
        "data": {"run": run_id, "version": version},
    }
    defaults.update(fields)
    return SnapshotRecord(run_id=run_id, version=version, suspended_at=at(second), **defaults)


def claim(run_id: str, key: str, *, second: float = 0, **fields: Any) -> ClaimRecord:
    """An ``approved`` claim on ``(run_id, key)`` decided ``second`` seconds after ``T0``."""
    defaults: dict[str, Any] = {
        "tool_call_id": key.split("#")[0],
        "decision": "approved",
        "decided_by": "U1",
        "detail": {"source": "button", "args": {"b": 1, "a": [1, {"z": None}]}},
    }
    defaults.update(fields)
    return ClaimRecord(run_id=run_id, key=key, decided_at=at(second), **defaults)


def message(thread_id: str, n: int, *, run_id: str | None = "run-1") -> MessageRecord:
    """Message number ``n`` of a thread."""
    return MessageRecord(
        id=f"{thread_id}-m{n}",
        thread_id=thread_id,
        resource_id="U1",
        run_id=run_id,
        role="user" if n % 2 == 0 else "assistant",
        content={"text": f"message {n}", "n": n},
        created_at=at(n),
    )


def event(n: int, *, second: float | None = None, **fields: Any) -> AuditEvent:
    """Audit event number ``n``, at ``T0 + second`` (default ``n``) seconds."""
    defaults: dict[str, Any] = {"kind": "decided", "actor": "U1", "source": "button"}
    defaults.update(fields)
    return AuditEvent(
        id=f"ev-{n}", at=at(n if second is None else second), data={"n": n}, **defaults
    )
