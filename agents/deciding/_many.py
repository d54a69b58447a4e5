"""``decide_many``: several pending calls of one run decided in ONE storage transaction.

read the run once → find and guard every call (expiry, who may decide, quorum, fingerprint,
definition) → one ``DecisionBatch`` (``Storage.commit_batch``) → continue the run with every
claimed call. Any refusal names its call and nothing is recorded; a quorum call gets one
approval and keeps pending unless that approval completes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agents._runtime import Runtime
from agents.deciding._authority import still_counting
from agents.deciding._claims import (
    CLAIMED_AS,
    Found,
    already_decided,
    claim,
    decided_claim,
    decided_event,
    found_in,
    guard,
)
from agents.deciding._decide import (
    Continuation,
    decided_outcome,
    local_outcome,
    report,
    waiting_for_more,
)
from agents.deciding._lease import Lease
from agents.deciding._present import check_definition
from agents.decisions import Approve, DecisionRequest, Decline
from agents.errors import AgentConfigError, AlreadyDecided, DuplicateApproval
from agents.running._run import Decided, Run
from agents.running._stream import AgentStream
from storage import (
    ApprovalRecord,
    AuditEvent,
    BatchRefusal,
    ClaimRecord,
    DecisionBatch,
    SnapshotVersionConflict,
    utcnow,
)

_ATTEMPTS = 5
"""How often the batch reads its run again when the run changed while it was checked."""


@dataclass(frozen=True, kw_only=True)
class ManyRequest:
    """The calls of one run to decide together, and who decides them from where."""

    run_id: str
    decisions: Mapping[str, Approve | Decline]
    decided_by: str | None
    fingerprints: Mapping[str, str]
    definition_digests: Mapping[str, str]
    source: str


async def decide_many(rt: Runtime, request: ManyRequest) -> AgentStream:
    """Take every decision of ``request`` (raising the first refusal now, having recorded
    nothing) and continue the run in the background."""
    _check(request)
    for attempt in range(_ATTEMPTS):
        try:
            taken = await _take(rt, request)
            break
        except SnapshotVersionConflict:
            if attempt == _ATTEMPTS - 1:
                raise
    rt.runner.submit(taken.drive(), name=f"run-{request.run_id}", bounded=False)
    return taken.stream


def _check(request: ManyRequest) -> None:
    if not request.decisions:
        raise AgentConfigError("decide_many() needs at least one decision: {tool_call_id: ...}")
    for tool_call_id, decision in request.decisions.items():
        if isinstance(decision, Approve) and decision.args is not None:
            raise AgentConfigError(
                f"tool call {tool_call_id!r}: edited arguments are decided one call at a "
                "time: use decide(Approve(args=...), ...) for it"
            )
        if not isinstance(decision, Approve | Decline) or (
            isinstance(decision, Decline) and decision.withdrawn
        ):
            raise AgentConfigError(
                f"tool call {tool_call_id!r}: decide_many() takes Approve() or "
                "Decline(reason=...) per call; resume, expire and withdraw one call at a time"
            )
    extra = set(request.fingerprints) - set(request.decisions)
    if extra:
        raise AgentConfigError(
            f"fingerprints given for calls not decided: {sorted(extra)!r}; "
            "pass a fingerprint only with a decision for the same tool_call_id"
        )


async def _take(rt: Runtime, request: ManyRequest) -> Continuation:
    loaded = await rt.storage.load_run_and_escalations(request.run_id)
    found: dict[str, Found] = {}
    for tool_call_id, decision in request.decisions.items():
        one = found_in(
            request.run_id,
            loaded,
            tool_call_id,
            "approval",
            request.fingerprints.get(tool_call_id),
        )
        await guard(rt, one, decision, request.decided_by)
        found[tool_call_id] = one
    for tool_call_id, decision in request.decisions.items():
        if isinstance(decision, Approve):
            await check_definition(
                rt,
                found[tool_call_id],
                decided_by=request.decided_by,
                source=request.source,
                seen=request.definition_digests.get(tool_call_id),
            )
    batch = await _batch(rt, request, found)
    refused = await rt.storage.commit_batch(
        DecisionBatch(claims=batch.claims, approvals=batch.votes, audit=batch.audit)
    )
    if refused is not None:
        raise _refusal(refused, found, request.decided_by)
    record, state = next(iter(found.values())).record, next(iter(found.values())).state
    await _quorums_met_meanwhile(rt, request, found, batch)
    for pending, _, _ in batch.decided:
        report(rt, state, pending, request.decisions[pending.tool_call_id], request.source)
    if not batch.decided:
        escalations = next(iter(found.values())).escalations
        return waiting_for_more(state, batch.approvers, escalations)
    run = Run(rt, state, AgentStream(state.run_id), version=record.version)
    run.approved_by = batch.approvers
    return Continuation(stream=run.stream, drive=lambda: run.finish_decided(batch.decided))


async def _quorums_met_meanwhile(
    rt: Runtime, request: ManyRequest, found: Mapping[str, Found], batch: _Batch
) -> None:
    """A quorum call this batch voted for without completing it, whose quorum another
    approval (committed between the batch's read and its commit) completed after all: claimed
    here, as the single path claims after its tally (whoever claims first runs it; the other
    gets ``AlreadyDecided`` and leaves it)."""
    if not batch.approvers:
        return
    run_id = request.run_id
    stored = (await rt.storage.list_approvals([run_id])).get(run_id, [])
    for one in found.values():
        pending = one.pending
        if pending.claim_key not in batch.approvers:
            continue
        approvers = pending.counted([a.approver for a in stored if a.key == pending.claim_key])
        if len(approvers) < pending.approvals_required:
            continue
        decision = request.decisions[pending.tool_call_id]
        try:
            taken = await claim(
                rt,
                one.state,
                pending,
                decision,
                decided_by=request.decided_by,
                source=request.source,
                detail={"approved_by": approvers},
            )
        except AlreadyDecided:
            continue  # the other approval's own claim was first
        del batch.approvers[pending.claim_key]
        tool = rt.find_tool(pending.agent_path, pending.tool_name)
        local, _ = local_outcome(decision, pending, tool)
        one_request = DecisionRequest(
            run_id=run_id,
            tool_call_id=pending.tool_call_id,
            decided_by=request.decided_by,
            source=request.source,
        )
        outcome = decided_outcome(rt, one_request, pending, decision, local)
        batch.decided.append((pending, outcome, Lease.of(taken, rt.owner)))


@dataclass(frozen=True, kw_only=True)
class _Batch:
    claims: list[ClaimRecord]
    votes: list[ApprovalRecord]
    audit: list[AuditEvent]
    decided: list[Decided]
    approvers: dict[str, list[str]]
    """Per claim key of a quorum call that keeps pending: who has approved it now."""


async def _batch(rt: Runtime, request: ManyRequest, found: Mapping[str, Found]) -> _Batch:
    """What the batch writes: a claim per decided call, an approval per quorum vote."""
    now = utcnow()
    lease_until = now + timedelta(seconds=rt.claim_lease_seconds)
    out = _Batch(claims=[], votes=[], audit=[], decided=[], approvers={})
    decided_by, source = request.decided_by, request.source
    for tool_call_id, decision in request.decisions.items():
        one = found[tool_call_id]
        state, pending = one.state, one.pending
        tool = rt.find_tool(pending.agent_path, pending.tool_name)
        local, detail = local_outcome(decision, pending, tool)
        if isinstance(decision, Approve) and pending.approvals_required > 1:
            assert decided_by is not None  # guard() refused a quorum approval without one
            vote = ApprovalRecord(
                run_id=state.run_id, key=pending.claim_key, approver=decided_by, approved_at=now
            )
            out.votes.append(vote)
            approvers = pending.counted([*one.approved_by, decided_by])
            if len(approvers) >= pending.approvals_required:
                pending, approvers = await still_counting(rt, one, approvers, decided_by)
            if len(approvers) < pending.approvals_required:
                out.audit.append(_approval_recorded(rt, one, decided_by, approvers))
                out.approvers[pending.claim_key] = approvers
                continue
            detail = {**detail, "approved_by": approvers}
        verdict = CLAIMED_AS[decision.kind]
        claim = decided_claim(
            state,
            pending,
            verdict,
            decided_by=decided_by,
            decided_at=now,
            detail={"source": source, **detail},
            owner=rt.owner,
            lease_until=lease_until,
        )
        out.claims.append(claim)
        out.audit.append(decided_event(rt, state, pending, verdict, decided_by, source, detail))
        one_request = DecisionRequest(
            run_id=state.run_id, tool_call_id=tool_call_id, decided_by=decided_by, source=source
        )
        outcome = decided_outcome(rt, one_request, pending, decision, local)
        out.decided.append((pending, outcome, Lease.of(claim, rt.owner)))
    return out


def _approval_recorded(
    rt: Runtime, found: Found, decided_by: str, approvers: list[str]
) -> AuditEvent:
    pending = found.pending
    data: dict[str, Any] = {
        "tool_name": pending.tool_name,
        "fingerprint": pending.fingerprint,
        "approved_by": approvers,
        "approvals_required": pending.approvals_required,
    }
    return rt.audit_event(
        "approval-recorded",
        found.state,
        tool_call_id=pending.tool_call_id,
        actor=decided_by,
        data=data,
    )


def _refusal(
    refused: BatchRefusal, found: Mapping[str, Found], decided_by: str | None
) -> Exception:
    """The error naming the call storage refused (decided meanwhile, or approved twice)."""
    if refused.claim is not None:
        return already_decided(refused.claim)
    one = next(f for f in found.values() if f.pending.claim_key == refused.key)
    return DuplicateApproval(
        one.state.run_id,
        one.pending.tool_call_id,
        approver=refused.approver or decided_by or "",
        approved_by=one.approved_by,
        needed=one.pending.approvals_required,
    )
