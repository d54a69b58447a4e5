"""``decide_many``: several pending calls of one run decided in ONE storage transaction.

read the run once → every call judged by the gate as a single decision is (``agents.gate``:
expiry, who may decide, quorum, fingerprint, definition) → one ``DecisionBatch``
(``Storage.commit_batch``) → continue the run with every claimed call. Any refusal names its
call and nothing is recorded; a quorum call gets one approval and keeps pending unless that
approval completes it (counted as a single approval is: ``agents.gate.count``, the policy in
force asked again at the quorum, also for approvals that landed meanwhile).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents._runtime import Runtime
from agents.deciding._decide import (
    Continuation,
    decided_outcome,
    local_outcome,
    presented,
    report,
    waiting_for_more,
)
from agents.decisions import Approve, DecisionRequest, Decline
from agents.errors import AgentConfigError, AlreadyDecided, DuplicateApproval, GrantNotAllowed
from agents.gate import (
    CLAIMED_AS,
    Case,
    already_decided,
    claim,
    count,
    discount,
    found_in,
    judge,
    leased_claim,
    record,
)
from agents.running._run import Decided, Run
from agents.running._stream import AgentStream
from agents.stored._lease import Lease
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

    def one(self, tool_call_id: str) -> DecisionRequest:
        """The request of one call of the batch, as a single decision would carry it."""
        return DecisionRequest(
            run_id=self.run_id,
            tool_call_id=tool_call_id,
            fingerprint=self.fingerprints.get(tool_call_id),
            decided_by=self.decided_by,
            definition_digest=self.definition_digests.get(tool_call_id),
            source=self.source,
        )


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
        if isinstance(decision, Approve) and decision.grant is not None:
            raise GrantNotAllowed(
                "decide_many() creates no standing grant: approve this call with "
                "decide(Approve(grant=...)), then the others with decide_many()",
                tool_call_id=tool_call_id,
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
    cases: dict[str, Case] = {}
    for tool_call_id, decision in request.decisions.items():
        one = request.one(tool_call_id)
        found = found_in(request.run_id, loaded, tool_call_id, "approval", one.fingerprint)
        tool = rt.find_tool(found.pending.agent_path, found.pending.tool_name)
        case = Case(rt=rt, found=found, decision=decision, request=one, tool=tool)
        cases[tool_call_id] = await judge(case)
    for case in cases.values():  # a redefined tool: that call is presented again, nothing else
        if case.presents is not None and case.presents.changed is not None:
            recorded = await record(case)
            assert recorded.state is not None
            case.presents.changed.stream = presented(recorded.state, recorded.pending)
            raise case.presents.changed
    batch = _batch(rt, request, cases)
    refused = await rt.storage.commit_batch(
        DecisionBatch(claims=batch.claims, approvals=batch.votes, audit=batch.audit)
    )
    if refused is not None:
        raise _refusal(refused, cases, request.decided_by)
    first = next(iter(cases.values()))
    record_, state = first.found.record, first.state
    await _quorums_now(rt, request, cases, batch)
    for pending, _, _ in batch.decided:
        report(rt, state, pending, request.decisions[pending.tool_call_id], request.source)
    if not batch.decided:
        return waiting_for_more(rt, state, batch.approvers, first.found.escalations)
    run = Run(rt, state, AgentStream(state.run_id), version=record_.version)
    run.approved_by = batch.approvers
    return Continuation(stream=run.stream, drive=lambda: run.finish_decided(batch.decided))


async def _quorums_now(
    rt: Runtime, request: ManyRequest, cases: Mapping[str, Case], batch: _Batch
) -> None:
    """Every quorum call this batch voted for, counted from what storage holds now (another
    approval may have landed between the batch's read and its commit), as a single approval
    is counted: the policy in force asked again once the quorum would be met. Those it no
    longer lets count are discounted; a quorum met after all is claimed here (whoever claims
    first runs it; the other gets ``AlreadyDecided`` and leaves it)."""
    if not batch.approvers:
        return
    stored = (await rt.storage.list_approvals([request.run_id])).get(request.run_id, [])
    for case in cases.values():
        pending = case.pending
        if pending.claim_key not in batch.approvers:
            continue
        mine = [a.approver for a in stored if a.key == pending.claim_key]
        approvers, refused = await count(case, mine)
        if refused:
            pending = await discount(case, refused)
        batch.approvers[pending.claim_key] = approvers
        if len(approvers) < pending.approvals_required:
            continue
        decision = request.decisions[pending.tool_call_id]
        try:
            taken = await claim(
                rt,
                case.state,
                pending,
                decision,
                decided_by=request.decided_by,
                source=request.source,
                detail={"approved_by": approvers},
            )
        except AlreadyDecided:
            continue  # the other approval's own claim was first
        del batch.approvers[pending.claim_key]
        local, _ = local_outcome(decision, pending, case.tool)
        outcome = decided_outcome(rt, case.request, pending, decision, local)
        batch.decided.append((pending, outcome, Lease.of(taken, rt.owner)))


@dataclass(frozen=True, kw_only=True)
class _Batch:
    claims: list[ClaimRecord]
    votes: list[ApprovalRecord]
    audit: list[AuditEvent]
    decided: list[Decided]
    approvers: dict[str, list[str]]
    """Per claim key of a quorum call that keeps pending: who has approved it now."""


def _batch(rt: Runtime, request: ManyRequest, cases: Mapping[str, Case]) -> _Batch:
    """What the batch writes: a claim per decided call, an approval per quorum vote (the
    gate counted each: ``Case.approvers``)."""
    now = utcnow()
    out = _Batch(claims=[], votes=[], audit=[], decided=[], approvers={})
    decided_by, source = request.decided_by, request.source
    for case in cases.values():
        state, pending, decision = case.state, case.pending, case.decision
        local, detail = local_outcome(decision, pending, case.tool)
        detail = {**detail, **case.detail}
        if case.approvers is not None and decided_by is not None:
            out.votes.append(
                ApprovalRecord(
                    run_id=state.run_id, key=pending.claim_key, approver=decided_by, approved_at=now
                )
            )
            if len(case.approvers) < pending.approvals_required:
                out.audit.append(_approval_recorded(case, decided_by, case.approvers))
                out.approvers[pending.claim_key] = case.approvers
                continue
        verdict = CLAIMED_AS[decision.kind]
        taken, event = leased_claim(
            rt, state, pending, verdict, decided_by=decided_by, source=source, detail=detail
        )
        out.claims.append(taken)
        out.audit.append(event)
        outcome = decided_outcome(rt, case.request, pending, decision, local)
        out.decided.append((pending, outcome, Lease.of(taken, rt.owner)))
    return out


def _approval_recorded(case: Case, decided_by: str, approvers: list[str]) -> AuditEvent:
    pending = case.pending
    data: dict[str, Any] = {
        "tool_name": pending.tool_name,
        "fingerprint": pending.fingerprint,
        "approved_by": approvers,
        "approvals_required": pending.approvals_required,
    }
    return case.rt.audit_event(
        "approval-recorded",
        case.state,
        tool_call_id=pending.tool_call_id,
        actor=decided_by,
        data=data,
    )


def _refusal(refused: BatchRefusal, cases: Mapping[str, Case], decided_by: str | None) -> Exception:
    """The error naming the call storage refused (decided meanwhile, or approved twice)."""
    if refused.claim is not None:
        return already_decided(refused.claim)
    one = next(c for c in cases.values() if c.pending.claim_key == refused.key)
    return DuplicateApproval(
        one.state.run_id,
        one.pending.tool_call_id,
        approver=refused.approver or decided_by or "",
        approved_by=one.found.approved_by,
        needed=one.pending.approvals_required,
    )
