"""Standing grants in the decision path (SPEC 15): creating one with an approval, approving a
later call with one, listing and revoking them.

- Creating: ``requested_grant`` checks an ``Approve(grant=...)`` against the stored call (its
  rule's bounds, no quorum, no confirm, no edit) BEFORE anything is claimed, and builds the
  record ``claim`` stores in the approval's own transaction.
- Using: ``take_granted`` runs when gated calls have just been stored as pending: a call whose
  tool, agent path, scope and pinned arguments match a grant usable now, whose grantor the
  decision policy lets approve it (never its requester), is claimed as the grantor's decision
  with ``source="grant"``, the use counted by storage in the same transaction (the use past
  ``max_uses``, after expiry or revocation writes nothing and the call pends as usual).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agents._ids import new_id
from agents._results import Grant, PendingToolCall
from agents._runtime import Runtime
from agents.deciding._claims import Found, decided_claim, decided_event
from agents.deciding._lease import Lease
from agents.deciding._state import PendingCallState, RunState
from agents.decisions import Approve, ask_policy
from agents.errors import GrantNotAllowed
from agents.observing._observe import DecisionTaken, notify
from agents.running._chunks import ToolCallGrantedChunk
from storage import ClaimRecord, GrantRecord, GrantUnavailable, GrantUse, StateChange, utcnow

GRANT_SOURCE = "grant"
"""The ``source`` of a decision a standing grant took."""


def requested_grant(found: Found, decision: Approve, decided_by: str | None) -> GrantRecord | None:
    """The grant ``decision`` asks to store with its approval (None: it asks for none);
    ``GrantNotAllowed`` when the call's rule does not allow it (nothing is claimed)."""
    request = decision.grant
    if request is None:
        return None
    state, pending = found.state, found.pending
    refuse = _refuser(pending)
    if decision.args is not None and decision.args != pending.args:
        raise refuse("an approval with edited arguments cannot create a grant")
    if pending.edited_from is not None:
        raise refuse("an edited proposal cannot create a grant")
    if pending.approvals_required > 1:
        raise refuse(f"{pending.tool_name} needs {pending.approvals_required} approvers")
    bounds = pending.grants
    if bounds is None or pending.delegate is not None:
        raise refuse(f"the rule for {pending.tool_name} allows no standing grant")
    if decided_by is None:
        raise refuse("a grant is a person's: pass decided_by")
    if not request.seconds > 0 or (
        bounds.max_seconds is not None and request.seconds > bounds.max_seconds
    ):
        raise refuse(
            f"a grant lasts more than 0 and at most {bounds.max_seconds:g} seconds here, "
            f"not {request.seconds:g}"
            if bounds.max_seconds is not None
            else f"a grant must last more than 0 seconds, not {request.seconds:g}"
        )
    if request.max_uses < 1 or (bounds.max_uses is not None and request.max_uses > bounds.max_uses):
        raise refuse(
            f"a grant approves 1 to {bounds.max_uses or 'any number of'} calls here, "
            f"not {request.max_uses}"
        )
    unknown = sorted(set(request.free_args) - set(pending.args))
    if unknown:
        raise refuse(f"{', '.join(unknown)} is not an argument of this call")
    scope = state.thread_id if request.within == "thread" else state.resource_id
    if scope is None:
        raise refuse(f"this run has no {request.within} to scope a grant to")
    now = utcnow()
    return GrantRecord(
        grant_id=new_id(),
        agent_id=state.agent_id,
        tool_name=pending.tool_name,
        agent_path=list(pending.agent_path),
        thread_id=state.thread_id if request.within == "thread" else None,
        resource_id=state.resource_id if request.within == "resource" else None,
        pins=pinned(pending.args, request.free_args),
        granted_by=decided_by,
        created_at=now,
        expires_at=now + timedelta(seconds=request.seconds),
        max_uses=request.max_uses,
        free_args=sorted(set(request.free_args)),
        run_id=state.run_id,
        tool_call_id=pending.tool_call_id,
    )


def _refuser(pending: PendingCallState) -> Callable[[str], GrantNotAllowed]:
    def refuse(reason: str) -> GrantNotAllowed:
        return GrantNotAllowed(reason, tool_call_id=pending.tool_call_id)

    return refuse


def pinned(args: dict[str, Any], free_args: Iterable[str]) -> dict[str, Any]:
    """Every argument but the free ones: what a grant pins."""
    free = set(free_args)
    return {name: value for name, value in args.items() if name not in free}


@dataclass(frozen=True, kw_only=True)
class Granted:
    """A pending call a grant approved: claimed, its use counted; it runs next."""

    pending: PendingCallState
    grant: GrantRecord
    """The grant as it was after this use."""
    lease: Lease

    def chunk(self, run_id: str) -> ToolCallGrantedChunk:
        """The ``tool-call-granted`` chunk announcing it."""
        return ToolCallGrantedChunk(
            run_id=run_id,
            tool_call_id=self.pending.tool_call_id,
            tool_name=self.pending.tool_name,
            args=dict(self.pending.args),
            grant_id=self.grant.grant_id,
            granted_by=self.grant.granted_by,
            uses=self.grant.uses,
            max_uses=self.grant.max_uses,
            expires_at=self.grant.expires_at,
        )


async def take_granted(
    rt: Runtime, state: RunState, fresh: list[PendingCallState]
) -> list[Granted]:
    """Claim every call of ``fresh`` (just stored as pending) that a usable grant approves."""
    taken: list[Granted] = []
    for pending in fresh:
        if not _may_be_granted(pending) or (state.thread_id is None and state.resource_id is None):
            continue
        now = utcnow()
        candidates = await rt.storage.list_grants(
            agent_id=state.agent_id,
            tool_name=pending.tool_name,
            thread_id=state.thread_id,
            resource_id=state.resource_id,
            active_at=now,
        )
        for grant in reversed(candidates):  # the oldest first: it ends first
            if not await _applies(rt, grant, pending):
                continue
            claimed = await _use(rt, state, pending, grant)
            if claimed is not None:
                record, used = claimed
                taken.append(Granted(pending=pending, grant=used, lease=Lease.of(record, rt.owner)))
                break
    return taken


def _may_be_granted(pending: PendingCallState) -> bool:
    """Only a single approver's call, no confirm, not edited, of this agent (``grants``)."""
    return (
        pending.kind == "approval"
        and pending.grants is not None
        and pending.approvals_required == 1
        and pending.edited_from is None
        and pending.delegate is None
    )


async def _applies(rt: Runtime, grant: GrantRecord, pending: PendingCallState) -> bool:
    """Same agent path and pins, and the grantor may approve this call alone right now."""
    if grant.agent_path != pending.agent_path:
        return False
    if pinned(pending.args, grant.free_args) != grant.pins:
        return False
    if pending.requested_by is not None and pending.requested_by == grant.granted_by:
        return False  # a requester never approves their own call through their grant
    policy = rt.decision_policy
    if policy is None:
        return True
    return await ask_policy(policy, pending.public(), grant.granted_by, "approve") is None


async def _use(
    rt: Runtime, state: RunState, pending: PendingCallState, grant: GrantRecord
) -> tuple[ClaimRecord, GrantRecord] | None:
    """The claim of ``pending`` as ``grant``'s decision, with the use counted (one
    transaction); None when the grant may no longer be used or the call was decided first."""
    now = utcnow()
    detail = {"grant_id": grant.grant_id}
    record = decided_claim(
        state,
        pending,
        "approved",
        decided_by=grant.granted_by,
        decided_at=now,
        detail={"source": GRANT_SOURCE, **detail},
        owner=rt.owner,
        lease_until=now + timedelta(seconds=rt.claim_lease_seconds),
    )
    event = decided_event(
        rt, state, pending, "approved", grant.granted_by, GRANT_SOURCE, {**detail}
    )
    change = StateChange(
        claim=record, audit=[event], grant_use=GrantUse(grant_id=grant.grant_id, at=now)
    )
    try:
        existing = await rt.storage.commit(change)
    except GrantUnavailable:
        return None
    if existing is not None:
        return None
    if rt.observers:
        notify(
            rt.observers,
            DecisionTaken(
                agent_id=rt.id,
                run_id=state.run_id,
                tool_call_id=pending.tool_call_id,
                tool_name=pending.tool_name,
                decision="approved",
                outcome="granted",
                source=GRANT_SOURCE,
                waited_seconds=max(0.0, (utcnow() - pending.suspended_at).total_seconds()),
            ),
        )
    return record, _after_use(grant)


def _after_use(grant: GrantRecord) -> GrantRecord:
    return dataclasses.replace(grant, uses=grant.uses + 1)


# -- listing and revoking ---------------------------------------------------------------------
def public(record: GrantRecord) -> Grant:
    """A stored grant as the runtime hands it out."""
    return Grant(
        grant_id=record.grant_id,
        tool_name=record.tool_name,
        agent_path=list(record.agent_path),
        thread_id=record.thread_id,
        resource_id=record.resource_id,
        pins=dict(record.pins),
        free_args=list(record.free_args),
        granted_by=record.granted_by,
        created_at=record.created_at,
        expires_at=record.expires_at,
        max_uses=record.max_uses,
        uses=record.uses,
        revoked_at=record.revoked_at,
        revoked_by=record.revoked_by,
        agent_id=record.agent_id,
    )


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
    policy = rt.decision_policy
    if revoked_by is None:
        return policy is None
    if policy is None:
        return True
    call = PendingToolCall(
        tool_call_id=record.tool_call_id or record.grant_id,
        tool_name=record.tool_name,
        args=dict(record.pins),
        requires_approval=True,
        suspend_payload=None,
        resume_schema=None,
        fingerprint="",
        agent_path=list(record.agent_path),
    )
    return await ask_policy(policy, call, revoked_by, "approve") is None
