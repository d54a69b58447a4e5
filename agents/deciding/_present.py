"""Presenting a pending call again: the call as shown is replaced by a new proposal of the
same call (same ``tool_call_id``, next round, approvals counting from zero).

Two things do it (SPEC 3.3 "An approval binds what runs"): an edit that needs more than the
call as shown (``agents.deciding._edits``), and a tool whose definition changed since the call
was shown (``check_definition``, raising ``ToolChanged``). The replacement is one transaction:
the shown round's claim key is taken (so a decision racing it on the old proposal gets
``AlreadyDecided``), completed at once as ``replaced`` (nothing of it runs, so no lease and no
recovery), the snapshot with the new proposal (version-checked) and the audit.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents._results import RunResult
from agents._runtime import Runtime
from agents.deciding._claims import Found, already_decided, decided_claim, decided_event
from agents.deciding._state import PendingCallState, RunState
from agents.deciding._writes import requested_data
from agents.errors import ToolChanged
from agents.running._chunks import FinishChunk, StartChunk
from agents.running._stream import AgentStream
from storage import SnapshotRecord, StateChange, utcnow

REPLACED = {"status": "replaced"}
"""The outcome stored with the claim of a round that was presented again (nothing ran)."""


def next_round(pending: PendingCallState, **changes: Any) -> PendingCallState:
    """``pending`` as a new proposal: the next round (a new claim key, so no approval of the
    shown round counts), waiting from now, with ``changes``."""
    fresh: dict[str, Any] = {
        "round": pending.round + 1,
        "suspended_at": utcnow(),
        "carried_approvals": [],
        "discounted": [],
    }
    return pending.model_copy(update={**fresh, **changes})


async def present_again(
    rt: Runtime,
    found: Found,
    proposal: PendingCallState,
    *,
    claimed_as: str,
    decided_by: str | None,
    source: str,
    detail: dict[str, Any],
) -> RunState:
    """Replace the found call by ``proposal`` in one transaction; returns the stored state.

    Raises ``AlreadyDecided`` when the shown round was decided first (nothing is written) and
    ``SnapshotVersionConflict`` when the run changed meanwhile (nothing is written: find the
    call again and retry).
    """
    state, shown = found.state, found.pending
    now = utcnow()
    replaced = state.model_copy(
        update={
            "pending": [proposal if p.claim_key == shown.claim_key else p for p in state.pending]
        }
    )
    claim = decided_claim(
        state,
        shown,
        claimed_as,
        decided_by=decided_by,
        decided_at=now,
        detail={"source": source, **detail},
        status="completed",
        outcome=dict(REPLACED),
        completed_at=now,
    )
    snapshot = SnapshotRecord(
        run_id=state.run_id,
        agent_id=state.agent_id,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        suspended_at=now,
        version=found.record.version + 1,
        data=replaced.to_document(),
        decidable=True,
    )
    audit = [
        decided_event(rt, state, shown, claimed_as, decided_by, source, detail),
        rt.audit_event(
            "approval-requested",
            state,
            tool_call_id=proposal.tool_call_id,
            actor=proposal.requested_by,
            data={
                **requested_data(proposal),
                "approved_by": proposal.counted(),
                "edited_from": proposal.edited_from,
                "definition_digest": proposal.definition_digest,
                "presented_again": claimed_as,
            },
        ),
    ]
    existing = await rt.storage.commit(StateChange(claim=claim, snapshot=snapshot, audit=audit))
    if existing is not None:
        raise already_decided(existing)
    return replaced


def presented(state: RunState, proposal: PendingCallState) -> AgentStream:
    """The (already finished) stream of a call presented again: a new ``tool-call-approval``
    chunk, then ``finish_reason "suspended"`` (nothing ran)."""
    stream = AgentStream(state.run_id)
    stream.emit(StartChunk(run_id=state.run_id))
    stream.emit(proposal.announcement(state.run_id))
    stream.emit(FinishChunk(run_id=state.run_id, finish_reason="suspended"))
    pending = [p.public() for p in state.pending]
    result = RunResult(text="", finish_reason="suspended", run_id=state.run_id, pending=pending)
    stream.close(result)
    return stream


async def check_definition(
    rt: Runtime, found: Found, *, decided_by: str | None, source: str, seen: str | None = None
) -> None:
    """The tool that would run must be the one shown (its ``definition_digest``); else the
    call is presented again with the new definition and ``ToolChanged`` is raised.

    ``seen``: the digest the decider saw (a card's); a decision on a definition presented
    again since raises ``ToolChanged`` too. A call stored before digests were (None) is
    accepted; a tool the agent no longer has is left to fail as it runs.
    """
    pending = found.pending
    if pending.kind != "approval" or pending.definition_digest is None:
        return
    if seen is not None and seen != pending.definition_digest:
        raise ToolChanged(
            found.state.run_id,
            pending.tool_call_id,
            shown_digest=seen,
            current_digest=pending.definition_digest,
            call=found.call(),
            presented_again=False,
        )
    tool = rt.find_tool(pending.agent_path, pending.tool_name)
    if tool is None or tool.definition_digest == pending.definition_digest:
        return
    window = None
    if pending.expires_at is not None:
        window = pending.expires_at - pending.suspended_at
    proposal = next_round(
        pending,
        definition_digest=tool.definition_digest,
        approvals_required=max(pending.approvals_required, tool.approvals),
    )
    if window is not None:
        proposal = proposal.model_copy(
            update={"expires_at": proposal.suspended_at + max(window, timedelta(seconds=0))}
        )
    stored = await present_again(
        rt,
        found,
        proposal,
        claimed_as="redefined",
        decided_by=decided_by,
        source=source,
        detail={
            "shown_digest": pending.definition_digest,
            "current_digest": tool.definition_digest,
        },
    )
    raise ToolChanged(
        found.state.run_id,
        pending.tool_call_id,
        shown_digest=pending.definition_digest,
        current_digest=tool.definition_digest,
        call=proposal.public(),
        stream=presented(stored, proposal),
    )
