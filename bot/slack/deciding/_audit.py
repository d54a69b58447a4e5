"""Audit events the Slack edge writes itself (the runtime writes requests, decisions and
executions): ``refused`` (a click or submit a rule turned away) and ``expired``."""

from __future__ import annotations

import uuid
from typing import Any, Final, Literal

from storage import AuditEvent, EdgeAuditKind, Storage, utcnow

REFUSED: Final[Literal["refused"]] = "refused"
EXPIRED: Final[Literal["expired"]] = "expired"
SYSTEM = "system"
"""The actor of decisions nobody made (expiry)."""


async def record(
    storage: Storage,
    kind: EdgeAuditKind,
    *,
    run_id: str,
    tool_call_id: str,
    actor: str,
    source: str,
    thread_id: str | None = None,
    agent_id: str | None = None,
    data: dict[str, Any] | None = None,
) -> None:
    """Append one event to the audit log."""
    await storage.append_audit(
        AuditEvent(
            id=uuid.uuid4().hex,
            at=utcnow(),
            kind=kind,
            run_id=run_id,
            tool_call_id=tool_call_id,
            thread_id=thread_id,
            agent_id=agent_id,
            actor=actor,
            source=source,
            data=data or {},
        )
    )
