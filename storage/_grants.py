"""Standing grants as storage keeps them (SPEC 15): the record, one use of it, and the rules
every backend applies the same way (when a use may happen, which grants a listing returns).

A grant is written in the same transaction as the approval that created it
(``StateChange.grant``) and used in the same transaction as the claim it approves
(``StateChange.grant_uses``): the use that would exceed ``max_uses``, or comes at or after
``expires_at`` or after ``revoked_at``, is refused with ``GrantUnavailable`` and the whole
change writes nothing.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from storage._errors import GrantUnavailable
from storage._records import GrantRecord, GrantUse


def refusal(record: GrantRecord | None, use: GrantUse) -> GrantUnavailable | None:
    """Why ``use`` may not happen on ``record`` (None: it may)."""
    if record is None:
        return GrantUnavailable(use.grant_id, "there is no such grant")
    if record.revoked_at is not None:
        return GrantUnavailable(use.grant_id, "it was revoked")
    if use.at >= record.expires_at:
        return GrantUnavailable(use.grant_id, "it expired")
    if record.uses >= record.max_uses:
        return GrantUnavailable(use.grant_id, "every use of it was taken")
    return None


def used(record: GrantRecord) -> GrantRecord:
    """``record`` with one more use."""
    return dataclasses.replace(record, uses=record.uses + 1)


def revoked(record: GrantRecord, *, by: str | None, at: datetime) -> GrantRecord:
    """``record`` revoked by ``by`` at ``at`` (kept as it was when already revoked)."""
    if record.revoked_at is not None:
        return record
    return dataclasses.replace(record, revoked_at=at, revoked_by=by)


def listed(
    record: GrantRecord,
    *,
    agent_id: str | None = None,
    tool_name: str | None = None,
    thread_id: str | None = None,
    resource_id: str | None = None,
    granted_by: str | None = None,
    active_at: datetime | None = None,
) -> bool:
    """Whether ``list_grants`` with these filters returns ``record`` (None: any).

    ``thread_id`` and ``resource_id`` together select the grants that apply in that thread:
    those of the thread and those of its resource. ``active_at``: not revoked, not expired and
    not used up at that moment.
    """
    if agent_id is not None and record.agent_id != agent_id:
        return False
    if tool_name is not None and record.tool_name != tool_name:
        return False
    if granted_by is not None and record.granted_by != granted_by:
        return False
    if thread_id is not None and resource_id is not None:
        if record.thread_id != thread_id and (
            record.thread_id is not None or record.resource_id != resource_id
        ):
            return False
    elif (thread_id is not None and record.thread_id != thread_id) or (
        resource_id is not None and record.resource_id != resource_id
    ):
        return False
    if active_at is not None:
        return refusal(record, GrantUse(grant_id=record.grant_id, at=active_at)) is None
    return True


def ended_before(record: GrantRecord, before: datetime) -> bool:
    """Whether ``prune`` with this cutoff deletes ``record``: it expired before ``before``, was
    revoked before it, or is used up and was created before it (a use's time is not kept)."""
    return (
        record.expires_at < before
        or (record.revoked_at is not None and record.revoked_at < before)
        or (record.uses >= record.max_uses and record.created_at < before)
    )


def newest_first(records: list[GrantRecord]) -> list[GrantRecord]:
    """Listing order: newest ``created_at`` first, then by id."""
    return sorted(records, key=lambda g: (g.created_at, g.grant_id), reverse=True)
