"""Gate: expiry (SPEC 3.3). A call past its ``expires_at`` is decided by nobody but the
system (``Expire``), whether or not any sweep ran."""

from __future__ import annotations

from agents.errors import ApprovalExpired
from agents.gate._judgement import Case
from storage import utcnow


async def not_expired(case: Case) -> Case:
    """Refuse every decision but ``Expire`` once the call expired."""
    expires_at = case.pending.expires_at
    if case.decision.kind != "expire" and expires_at is not None and utcnow() >= expires_at:
        raise ApprovalExpired(case.state.run_id, case.pending.tool_call_id, decided_at=expires_at)
    return case
