"""Calls a standing grant approves as they are proposed (SPEC 15): written decided with the
snapshot that stores them, and announced with a ``tool-call-granted`` chunk before they run."""

from __future__ import annotations

from agents._runtime import Runtime
from agents.gate import Granted, told_granted, usable_grant
from agents.running._chunks import ToolCallGrantedChunk
from agents.stored._state import PendingCallState, RunState
from agents.stored._writes import RunWriter
from storage import GrantUnavailable


async def save_granting(
    rt: Runtime, writer: RunWriter, state: RunState, fresh: list[PendingCallState]
) -> list[Granted]:
    """Save the snapshot of ``fresh``, with the first call a grant approves decided in the same
    transaction (a second one in the same step is claimed just after); the calls grants
    approved. A use the grant no longer allows (used up meanwhile) is left out: that call waits
    like the others."""
    offered = [g for p in fresh if (g := await usable_grant(rt, state, p))]
    first = offered[0] if offered else None
    try:
        await writer.save(state, granted=first)
    except GrantUnavailable:
        first = None
        await writer.save(state)
    taken = [first] if first is not None else []
    for more in offered[1:]:
        if await writer.take_granted(more):
            taken.append(more)
    for granted in taken:
        told_granted(rt, state, granted)
    return taken


def granted_chunk(granted: Granted, run_id: str) -> ToolCallGrantedChunk:
    """The ``tool-call-granted`` chunk announcing a call a grant approved."""
    pending, grant = granted.pending, granted.grant
    return ToolCallGrantedChunk(
        run_id=run_id,
        tool_call_id=pending.tool_call_id,
        tool_name=pending.tool_name,
        args=dict(pending.args),
        grant_id=grant.grant_id,
        granted_by=grant.granted_by,
        uses=grant.uses,
        max_uses=grant.max_uses,
        expires_at=grant.expires_at,
        within="thread" if grant.thread_id is not None else "resource",
        free_args=tuple(grant.free_args),
    )
