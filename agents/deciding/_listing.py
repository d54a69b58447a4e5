"""Finding pending calls through storage: one call by its handle, pages of suspended runs, the
runs due (the sweep's), and deciding by thread."""

from __future__ import annotations

from datetime import datetime

from agents._results import PendingToolCall, SuspendedRun, SuspendedRunsPage
from agents._runtime import Runtime
from agents.deciding._decide import decide
from agents.decisions import Approve, DecisionRequest, Decline
from agents.errors import AmbiguousToolCall, ToolCallNotSuspended
from agents.gate import in_force
from agents.running._stream import AgentStream
from agents.stored._state import RunState
from storage import DueKey, SnapshotRecord


async def list_suspended_runs(
    rt: Runtime,
    *,
    thread_id: str | None,
    resource_id: str | None,
    page: int | None,
    per_page: int | None,
) -> SuspendedRunsPage:
    """One indexed query for the page (only runs with something to decide), then the claims
    and approvals of just those runs."""
    paginate = page is not None and per_page is not None
    offset = page * per_page if paginate and page is not None and per_page is not None else 0
    records, total = await rt.storage.list_snapshots(
        agent_id=rt.id,
        thread_id=thread_id,
        resource_id=resource_id,
        offset=offset,
        limit=per_page if paginate else None,
        decidable_only=True,
    )
    return SuspendedRunsPage(runs=await suspended_runs(rt, records), total=total)


async def list_due_runs(
    rt: Runtime, *, until: datetime, after: DueKey | None, limit: int
) -> list[SuspendedRun]:
    """The runs due by ``until`` (one read of storage's due index, by key), with their calls."""
    records = await rt.storage.list_due(agent_id=rt.id, until=until, after=after, limit=limit)
    return await suspended_runs(rt, records)


async def suspended_runs(rt: Runtime, records: list[SnapshotRecord]) -> list[SuspendedRun]:
    """``records`` as suspended runs: the claims, approvals and escalation steps of just those
    runs read in one round trip each, the calls decided already left out."""
    run_ids = [r.run_id for r in records]
    claims = await rt.storage.list_claims_of_runs(run_ids)
    approvals = await rt.storage.list_approvals(run_ids) if run_ids else {}
    escalations = await rt.storage.list_escalations(run_ids) if run_ids else {}
    runs = []
    for record in records:
        state = RunState.model_validate(record.data)
        claimed = {c.key for c in claims.get(record.run_id, [])}
        approvers: dict[str, list[str]] = {}
        for approval in approvals.get(record.run_id, []):
            approvers.setdefault(approval.key, []).append(approval.approver)
        runs.append(
            SuspendedRun(
                run_id=record.run_id,
                agent_id=record.agent_id,
                thread_id=record.thread_id,
                resource_id=record.resource_id,
                suspended_at=record.suspended_at,
                tool_calls=[
                    in_force(
                        rt, p.public(approvers.get(p.claim_key), escalations.get(record.run_id, ()))
                    )
                    for p in state.pending
                    if p.claim_key not in claimed
                ],
                error=state.error,
                version=record.version,
                due_at=record.due_at,
            )
        )
    return runs


async def send_tool_approval(
    rt: Runtime,
    *,
    thread_id: str,
    resource_id: str | None,
    approved: bool,
    tool_call_id: str | None,
    reason: str | None,
    decided_by: str | None,
    source: str,
) -> AgentStream:
    """Find the thread's pending approval through storage and decide it."""
    listing = await list_suspended_runs(
        rt, thread_id=thread_id, resource_id=resource_id, page=None, per_page=None
    )
    candidates = [
        (run.run_id, call.tool_call_id)
        for run in listing.runs
        for call in run.tool_calls
        if call.requires_approval and tool_call_id in (None, call.tool_call_id)
    ]
    if not candidates:
        raise ToolCallNotSuspended(
            "",
            tool_call_id,
            f"no tool call waits for approval in thread {thread_id!r}"
            + (f" with id {tool_call_id!r}" if tool_call_id else ""),
        )
    if len(candidates) > 1:
        raise AmbiguousToolCall(candidates[0][0], [c for _, c in candidates])
    run_id, call_id = candidates[0]
    request = DecisionRequest(
        run_id=run_id, tool_call_id=call_id, decided_by=decided_by, source=source
    )
    return await decide(rt, request, Approve() if approved else Decline(reason=reason))


async def pending_call(rt: Runtime, *, run_id: str, tool_call_id: str) -> PendingToolCall | None:
    """The call ``tool_call_id`` of ``run_id`` while it waits, else None: one read of the run
    (its snapshot with its claims, approvals and escalation steps,
    ``Storage.load_run_and_escalations``, as a decision reads it).
    A sub-agent's call is found by the supervisor's handle, as it is decided."""
    record, claims, approvals, escalated = await rt.storage.load_run_and_escalations(run_id)
    if record is None or record.agent_id != rt.id:
        return None
    claimed = {c.key for c in claims}
    for pending in RunState.model_validate(record.data).pending:
        if pending.tool_call_id == tool_call_id and pending.claim_key not in claimed:
            approved_by = [a.approver for a in approvals if a.key == pending.claim_key]
            return in_force(rt, pending.public(approved_by, escalated))
    return None
