"""The edges' one question: may this person decide this call, and what happens if they do?

``case_of`` makes the judgement gates' ``Case`` of a call an edge already holds (from a listing,
``Agent.pending_call`` or an approval chunk), so a Home tab of many calls asks without reading
storage again per call; ``agents.gate.ask`` answers it with a ``Verdict`` and writes nothing.
The decision itself is judged again, from storage, inside its claim.
"""

from __future__ import annotations

from agents._results import PendingToolCall
from agents._runtime import Runtime
from agents.decisions import Decision, DecisionRequest
from agents.gate._found import Found
from agents.gate._judgement import Case
from agents.stored._state import PendingCallState, RunState
from storage import EscalationRecord, SnapshotRecord, utcnow


def case_of(
    rt: Runtime, call: PendingToolCall, decision: Decision, request: DecisionRequest
) -> Case:
    """The case of ``decision`` on ``call`` (as an edge holds it) by ``request.decided_by``."""
    now = utcnow()
    fields = {name: getattr(call, name) for name in PendingToolCall.model_fields}
    pending = PendingCallState.model_construct(
        **{**fields, "suspended_at": call.suspended_at or now},
        call_id=call.tool_call_id,
        local_tool=call.tool_name,
        local_args=call.args,
    )
    state = RunState.model_construct(run_id=request.run_id, agent_id=rt.id, pending=[pending])
    steps = []
    if call.escalation_step:
        steps.append(
            EscalationRecord(
                run_id=request.run_id,
                key=pending.claim_key,
                step=call.escalation_step,
                approvers=list(call.escalated_approvers),
                notify=[],
                escalated_at=now,
            )
        )
    record = SnapshotRecord(
        run_id=request.run_id,
        agent_id=rt.id,
        thread_id=None,
        resource_id=None,
        suspended_at=now,
        version=0,
        data={},
        decidable=True,
    )
    found = Found(
        record=record, state=state, pending=pending, approved_by=call.approved_by, escalations=steps
    )
    tool = rt.find_tool(call.agent_path, call.tool_name)
    return Case(rt=rt, found=found, decision=decision, request=request, tool=tool)
