"""Crash recovery: calls that were claimed but whose work never finished.

A claimed call is never silently run twice. A claim's owner renews its lease while the tool
runs (``agents.stored._lease``); when the owner died, any instance calling
``recover_interrupted_runs`` takes the claim over (atomically: one instance gets it, at the
next lease epoch) and then: an ``idempotent=True`` tool is run again with the same
``idempotency_key``; any other is reported ``interrupted`` (the model and the humans are told
the outcome is unknown); a decline or a resume of a call that was never started is simply
applied.

The grace rule: a claim is taken over only once its lease lapsed by more than one more lease
(``lease_until`` older than now minus ``claim_lease_seconds``). An owner that is alive but cut
off from storage retries its renewals and its outcome every fraction of a lease, so after an
outage shorter than about one and a half leases it writes first and nothing is reported
interrupted; a dead owner's call is recovered about two leases after its last renewal.

A takeover is final: the old owner's renewals and its completion carry the epoch it held, and
storage refuses them (``LeaseLost``), so a paused owner that wakes up and finishes its tool
drops the result unannounced, and each call has exactly one outcome: the new owner's.

Several agents may share one storage (the bot serves its agent and the gateway's): a lapsed
claim of another agent's run, taken over with the rest, is given back at once, lapsed, for that
agent's own recovery to take (never dropped, never left held by an agent that cannot finish it).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from agents._runtime import Runtime
from agents.deciding._decide import Continuation, continuation
from agents.observing._observe import ToolExecuted, notify
from agents.running._chunks import ToolCallResumedChunk
from agents.running._executor import outcome_of_sub_run
from agents.running._run import Run
from agents.running._stream import AgentStream
from agents.stored._lease import Lease
from agents.stored._outcome import Outcome
from agents.stored._state import PendingCallState, RunState
from agents.stored._writes import CONTINUE_PREFIX
from storage import (
    ClaimRecord,
    Completion,
    SnapshotKey,
    SnapshotRecord,
    StaleLease,
    StateChange,
    utcnow,
)

_BATCH = 100
_GIVEN_BACK = datetime(1970, 1, 1, tzinfo=UTC)
"""The lease of a claim given back to the agent whose run it is: lapsed for every recovery."""
_CHECKED = "agents:recovery:finished-claims-checked:{agent_id}"
"""Kept once ``_apply_finished_claims`` went through an agent's stored runs: that scan reads
every one of them, and only data written before one transaction covered a claim's completion
and its snapshot can need it, so each store is scanned once, not at every start."""
_CHECKED_TTL = 100 * 365 * 24 * 3600.0
_SCAN_PAGE = 200


async def recover_interrupted_runs(rt: Runtime, *, first: bool) -> list[AgentStream]:
    """Take over every claim whose lease lapsed (its owner died) and finish its call.

    ``first``: also look, once per store, for runs whose claim completed but whose snapshot was
    never updated (possible only with data written before one transaction covered both).
    """
    now = utcnow()
    lease = timedelta(seconds=rt.claim_lease_seconds)
    found: list[Continuation] = []
    others: list[ClaimRecord] = []
    while True:
        taken = await rt.storage.take_over_expired_claims(  # lapsed by more than the grace
            rt.owner, now=now - lease, lease_until=now + lease, limit=_BATCH
        )
        for claim in taken:
            if await _of_another_agent(rt, claim):
                others.append(claim)
                continue
            recovered = await recover_claim(rt, claim)
            if recovered is not None:
                found.append(recovered)
            elif claim.decision == "continued":
                await _drop(rt, claim)
        if len(taken) < _BATCH:
            break
    for claim in others:  # after the loop: taken again at once otherwise
        await rt.storage.renew_lease(
            claim.run_id, claim.key, rt.owner, _GIVEN_BACK, epoch=claim.epoch
        )
    checked = _CHECKED.format(agent_id=rt.id)
    if first and await rt.storage.get_value(checked) is None:
        handled = {c.stream.run_id for c in found}
        found.extend(await _apply_finished_claims(rt, skip=handled))
        await rt.storage.add_if_absent(checked, utcnow().isoformat(), _CHECKED_TTL)
    for c in found:
        rt.runner.submit(c.drive(), name=f"run-{c.stream.run_id}", bounded=False)
    return [c.stream for c in found]


async def recover_claim(rt: Runtime, claim: ClaimRecord) -> Continuation | None:
    """The continuation of one unfinished claim's run, or None when it is not this agent's."""
    record = await rt.storage.load_snapshot(claim.run_id)
    if record is None or record.agent_id != rt.id:
        return None
    state = RunState.model_validate(record.data)
    if claim.decision == "continued" and claim.key.startswith(CONTINUE_PREFIX):
        return await _answer_again(rt, record.version, state, claim)
    pending = next((p for p in state.pending if p.claim_key == claim.key), None)
    if pending is None:
        return None
    await rt.audit(
        "recovered", state, tool_call_id=pending.tool_call_id, data={"decision": claim.decision}
    )

    async def outcome(run: Run) -> Outcome:
        return await _recovered_outcome(rt, run, pending, claim)

    return continuation(rt, record.version, state, pending, outcome, Lease.of(claim, rt.owner))


async def _of_another_agent(rt: Runtime, claim: ClaimRecord) -> bool:
    """True when the claim's run is stored as a run of an agent outside this one's tree."""
    record = await rt.storage.load_snapshot(claim.run_id)
    return record is not None and record.agent_id not in _tree(rt)


def _tree(rt: Runtime) -> set[str]:
    """The ids of ``rt`` and of its sub-agents, at any depth."""
    return {rt.id}.union(*(_tree(sub) for sub in rt.agents.values()))


async def _drop(rt: Runtime, claim: ClaimRecord) -> None:
    """A continuation nobody here can finish (a sub-agent's answer inside a supervisor's call,
    which recovery reports for the supervisor; a run that moved on): completed as dropped, so
    it is not taken over again at every lease."""
    done = Completion(
        run_id=claim.run_id,
        key=claim.key,
        outcome={"status": "dropped"},
        owner=rt.owner,
        epoch=claim.epoch,
    )
    with contextlib.suppress(StaleLease):  # someone else took it meanwhile: theirs
        await rt.storage.commit(StateChange(completions=[done]))


async def _answer_again(
    rt: Runtime, version: int, state: RunState, claim: ClaimRecord
) -> Continuation | None:
    """A decided call's outcome was stored, but its process died while the model answered
    (before the answer was stored): the answer is produced here, once, under the taken-over
    lease. Its stream starts with the call it answers, so the edge shows it in that thread."""
    if state.pending or state.error is not None:
        return None  # the run moved on before the claim could be completed: nothing owed
    detail = claim.detail
    call = ToolCallResumedChunk(
        run_id=state.run_id,
        tool_call_id=str(detail.get("tool_call_id") or ""),
        tool_name=str(detail.get("tool_name") or ""),
        kind=detail.get("kind") or "approval",
    )
    await rt.audit("recovered", state, tool_call_id=call.tool_call_id, data={"answer": True})
    run = Run(rt, state, AgentStream(state.run_id), version=version)
    lease = Lease.of(claim, rt.owner)
    return Continuation(stream=run.stream, drive=lambda: run.answer_again(lease, call))


async def _recovered_outcome(
    rt: Runtime, run: Run, pending: PendingCallState, claim: ClaimRecord
) -> Outcome:
    if claim.decision == "expired":
        return Outcome.expired()
    if claim.decision == "declined":
        return Outcome.denied(claim.detail.get("reason"))
    if pending.delegate is not None:
        sub = rt.delegate_for(pending.local_tool)
        if sub is None:
            return Outcome.interrupted()
        inner_claims = await sub.storage.list_claims(pending.delegate.run_id)
        inner = next(
            (
                c
                for c in reversed(inner_claims)
                if c.tool_call_id == pending.delegate.tool_call_id and c.status == "claimed"
            ),
            None,
        )
        recovered = await recover_claim(sub, inner) if inner is not None else None
        if recovered is None:
            return Outcome.interrupted()
        await recovered.drive()
        return await outcome_of_sub_run(recovered.stream)
    tool = rt.tools.get(pending.local_tool)
    if tool is None or not tool.idempotent:
        notify(
            rt.observers,
            ToolExecuted(
                agent_id=rt.id,
                run_id=run.state.run_id,
                tool_call_id=pending.tool_call_id,
                tool_name=pending.local_tool,
                outcome="interrupted",
                seconds=0.0,
            ),
        )
        return Outcome.interrupted()
    args: dict[str, Any] = claim.detail.get("args") or pending.local_args
    resume_data: Any = None
    if claim.decision == "resumed":
        resume_data = tool.parse_resume(claim.detail.get("resume_data"))
        args = pending.local_args
    return await run.execute(
        pending.call_id,
        pending.local_tool,
        args,
        resume_data=resume_data,
        suspend_payload=pending.suspend_payload,
    )


async def _every_page(rt: Runtime) -> AsyncIterator[list[SnapshotRecord]]:
    """The agent's stored runs, ``_SCAN_PAGE`` at a time, newest first, each page read by key
    after the last one (never by offset, never counted), so memory stays flat and each page
    costs the same however many runs are stored. A run that ends meanwhile shifts none of the
    others, so every run stored throughout is read once; a run stored meanwhile lands ahead of
    the key and is not read (it is not stuck: it was just written).
    """
    after: SnapshotKey | None = None
    while True:
        page = await rt.storage.page_snapshots(agent_id=rt.id, after=after, limit=_SCAN_PAGE)
        if page:
            yield page
        if len(page) < _SCAN_PAGE:
            return
        after = (page[-1].suspended_at, page[-1].run_id)


async def _apply_finished_claims(rt: Runtime, *, skip: set[str]) -> list[Continuation]:
    """Runs whose claim completed but whose snapshot was not updated before a crash: the claims
    of a page's runs in one read, and only a run with a completed claim is parsed."""
    found: list[Continuation] = []
    async for page in _every_page(rt):
        runs = [record for record in page if record.run_id not in skip]
        claims_of = await rt.storage.list_claims_of_runs([record.run_id for record in runs])
        for record in runs:
            completed = {
                c.key: c
                for c in claims_of.get(record.run_id, [])
                if c.status == "completed" and c.outcome is not None
            }
            if not completed:
                continue  # nothing ran for it: nothing to apply
            state = RunState.model_validate(record.data)
            for pending in state.pending:
                claim = completed.get(pending.claim_key)
                if claim is not None and claim.outcome is not None:
                    done = Outcome.from_document(claim.outcome)

                    async def outcome(run: Run, done: Outcome = done) -> Outcome:
                        return done

                    held = Lease.of(claim, claim.owner)  # completed already: its own fence
                    found.append(continuation(rt, record.version, state, pending, outcome, held))
                    break
    return found
