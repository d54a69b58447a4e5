"""Calls standing grants approve as they are proposed (SPEC 15): written decided with the
snapshot that stores them, all in one transaction, and announced with a ``tool-call-granted``
chunk before they run."""

from __future__ import annotations

from collections import Counter

from agents._runtime import Runtime
from agents.gate import Granted, told_granted, usable_grant
from agents.running._chunks import ToolCallGrantedChunk
from agents.stored._state import PendingCallState, RunState
from agents.stored._writes import RunWriter
from storage import GrantUnavailable


async def save_granting(
    rt: Runtime, writer: RunWriter, state: RunState, fresh: list[PendingCallState]
) -> list[Granted]:
    """Save the snapshot of ``fresh`` with every call a standing grant approves decided in the
    same transaction (each grantor's claim and each use with the snapshot: a granted call is
    written once, as decided, never pending then claimed); the calls grants approved.

    A grant approves at most the uses it has left, the step's earlier calls counted. A grant
    the write refuses (used up, expired or revoked meanwhile, by another instance) approves
    none of them: the snapshot is saved without its calls, which wait like the others.
    """
    offered: list[Granted] = []
    used: Counter[str] = Counter()
    for pending in fresh:
        if (granted := await usable_grant(rt, state, pending, used=used)) is not None:
            offered.append(granted)
            used[granted.grant.grant_id] += 1
    while True:
        try:
            await writer.save(state, granted=offered)
            break
        except GrantUnavailable as refused:
            kept = [g for g in offered if g.grant.grant_id != refused.grant_id]
            if len(kept) == len(offered):
                raise
            offered = kept
    for granted in offered:
        told_granted(rt, state, granted)
    return offered


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
