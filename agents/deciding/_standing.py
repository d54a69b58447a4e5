"""Standing grants as people see them (SPEC 15): listing, and revoking by the grantor or an
approver of the rule (asked of the decision policy, as the gate asks it)."""

from __future__ import annotations

import copy
import dataclasses

from agents._results import Grant, PendingToolCall, Requirement
from agents._runtime import Runtime
from agents.errors import GrantNotAllowed
from agents.gate import owner_of
from agents.gate.gates._authority import refusal_of
from agents.gate.gates._host_rule import rules_in_force
from storage import GrantRecord, utcnow


def public(record: GrantRecord) -> Grant:
    """A stored grant as the runtime hands it out (every field ``Grant`` has, copied)."""
    fields = {f.name: copy.copy(getattr(record, f.name)) for f in dataclasses.fields(Grant)}
    return Grant(**fields)


async def list_grants(
    rt: Runtime,
    *,
    thread_id: str | None,
    resource_id: str | None,
    granted_by: str | None,
    active_only: bool = True,
) -> list[Grant]:
    """This agent's grants, newest first (only those usable now, unless ``active_only`` is
    False)."""
    found = await rt.storage.list_grants(
        agent_id=rt.id,
        thread_id=thread_id,
        resource_id=resource_id,
        granted_by=granted_by,
        active_at=utcnow() if active_only else None,
    )
    return [public(g) for g in found]


async def count_grants(rt: Runtime) -> int:
    """How many of this agent's grants are usable now (an index read; none is loaded)."""
    return await rt.storage.count_grants(agent_id=rt.id, active_at=utcnow())


async def revoke_grant(rt: Runtime, grant_id: str, *, revoked_by: str | None) -> Grant:
    """Revoke a grant of this agent: by its grantor, or by someone the decision policy lets
    approve the calls it pins; ``GrantNotAllowed`` for anyone else or no such grant."""
    record = await rt.storage.get_grant(grant_id)
    if record is None or record.agent_id != rt.id:
        raise GrantNotAllowed(f"there is no grant {grant_id!r} of agent {rt.id!r}")
    if revoked_by != record.granted_by and not await _may_revoke(rt, record, revoked_by):
        raise GrantNotAllowed(
            f"{revoked_by or 'a caller who is no person'} may not revoke grant {grant_id!r}: "
            "only its grantor or an approver of its rule may"
        )
    done = await rt.storage.revoke_grant(grant_id, revoked_by=revoked_by, at=utcnow())
    assert done is not None
    return public(done)


async def _may_revoke(rt: Runtime, record: GrantRecord, revoked_by: str | None) -> bool:
    """Whether ``revoked_by`` may approve a call the grant pins (an approver of its rule)."""
    if revoked_by is None:
        return rt.decision_policy is None
    owner = owner_of(rt, list(record.agent_path)) or rt
    call = PendingToolCall(
        tool_call_id=record.tool_call_id or record.grant_id,
        tool_name=record.tool_name,
        args=dict(record.pins),
        requires_approval=True,
        fingerprint="",
        agent_path=list(record.agent_path),
        requirement=rules_in_force(owner, Requirement(), record.tool_name, dict(record.pins)),
    )
    return await refusal_of(rt, call, revoked_by, "approve") is None
