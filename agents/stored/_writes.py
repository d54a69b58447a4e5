"""What a run stores, gathered and written in ONE transaction per state change.

A stretch of a run produces memory messages, audit events and the outcome of a decided call;
they wait in the ``Outbox`` and go to storage together with the change of state they belong
to: the snapshot written on suspension, the completion of a decided call, the end of the run.
So one approval cycle costs one transaction to suspend, one to decide (``agents.gate._claims``),
one to complete, and one to finish. A tool that ran has an outcome that must not be lost: its
completion is retried through a storage outage (every fraction of a lease, so it lands inside
the grace recovery grants, and for at most ``_OUTCOME_RETRY_SECONDS``). The completion carries
the lease it was run under: when storage refuses it (another instance took the claim over) the
change writes nothing and ``LeaseLost`` abandons the run.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol, TypeVar

from agents._ids import new_id
from agents._messages import Message
from agents._runtime import Runtime
from agents.errors import LeaseLost
from agents.stored._due import next_due
from agents.stored._lease import Lease
from agents.stored._outcome import Outcome
from agents.stored._state import PendingCallState, RunState
from storage import (
    AuditEvent,
    AuditKind,
    ClaimRecord,
    Completion,
    GrantUse,
    MessageRecord,
    SnapshotRecord,
    StaleLease,
    StateChange,
    StorageUnavailable,
    ThreadRecord,
    utcnow,
)
from storage import patiently as store_patiently

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONTINUE_PREFIX = "continue#"
"""Key prefix of the claim that leases the model's answer after a decided call (then the
run's step count): ``continue#3``."""
_MAX_RETRY_DELAY = 5.0
"""The longest wait between two attempts to store an outcome during an outage (and at most a
tenth of the lease, so the owner's write lands as soon as storage is back, inside the grace)."""
_OUTCOME_RETRY_SECONDS = 600.0
"""How long an outcome is retried through an outage at most (or ten leases, when longer); then
the run fails, and the claim is left to recovery (which reports the call ``interrupted``)."""


def requested_data(p: PendingCallState) -> dict[str, Any]:
    """What the audit of a call that starts waiting records about it (every round's)."""
    return {
        "tool_name": p.tool_name,
        "args": p.args,
        "fingerprint": p.fingerprint,
        "agent_path": p.agent_path,
        "requested_by": p.requested_by,
        "expires_at": p.expires_at.isoformat() if p.expires_at else None,
        "approvals_required": p.approvals_required,
    }


class GrantedClaim(Protocol):
    """A claim a standing grant takes for a call being stored (``agents.gate.Granted``)."""

    @property
    def claim(self) -> ClaimRecord: ...

    @property
    def event(self) -> AuditEvent: ...

    @property
    def use(self) -> GrantUse: ...


@dataclass
class Outbox:
    """Records waiting for the next state change of the run."""

    thread: ThreadRecord | None = None
    messages: list[MessageRecord] = field(default_factory=list)
    audit: list[AuditEvent] = field(default_factory=list)
    completions: list[Completion] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.thread or self.messages or self.audit or self.completions)


class RunWriter:
    """Keeps one run's outbox and its snapshot version; commits them together."""

    def __init__(self, rt: Runtime, *, version: int = 0) -> None:
        self.rt = rt
        self.version = version
        """The stored snapshot's version (0: none stored)."""
        self.outbox = Outbox()
        self._thread_written = False
        self.owed: Completion | None = None
        """The completion of the continuation claim this stretch runs under (``continue_after``),
        written with the run's next change: the stretch ends once that change is stored."""
        self.patient = False
        """Whether every write and read waits out a storage outage (``patiently``): set once
        a decided call's outcome is stored, so what the run owes the thread after it (the
        model's answer) is not lost to an outage either."""

    # -- gathering -------------------------------------------------------------------------
    def remembers(self, state: RunState) -> bool:
        """Whether ``remember`` keeps this run's messages (a memory, and a thread to keep)."""
        return self.rt.memory is not None and bool(state.thread_id)

    async def remember(self, state: RunState, messages: list[Message]) -> None:
        """Memory messages of the thread (the thread record too, the first time).

        Once a tool ran (its completion waits in the outbox), reading the thread waits out a
        storage outage like the completion does: the outcome must not be lost to that read.
        """
        memory = self.rt.memory
        if memory is None or not state.thread_id or not messages:
            return
        now = utcnow()
        if not self._thread_written and memory.storage is not None:
            thread_id, store = state.thread_id, memory.storage
            if self.outbox.completions or self.patient:
                known = await patiently(self.rt, state.run_id, lambda: store.get_thread(thread_id))
            else:
                known = await store.get_thread(thread_id)
            self.outbox.thread = ThreadRecord(
                thread_id=state.thread_id,
                resource_id=state.resource_id,
                created_at=known.created_at if known else now,
                updated_at=now,
                metadata=known.metadata if known else {},
            )
            self._thread_written = True
        self.outbox.messages.extend(
            MessageRecord(
                id=new_id(),
                thread_id=state.thread_id,
                resource_id=state.resource_id,
                run_id=state.run_id,
                role=m.role,
                content=m.model_dump(mode="json", exclude_defaults=True),
                created_at=now,
            )
            for m in messages
        )

    async def remember_outcome(
        self, state: RunState, call_id: str, local_tool: str, outcome: Outcome
    ) -> None:
        """The tool message of a call's terminal outcome, for the thread's memory."""
        if outcome.terminal and self.remembers(state):  # else: no message to build
            await self.remember(state, [outcome.tool_message(call_id, local_tool)])

    def audit(self, kind: AuditKind, state: RunState, **fields: Any) -> None:
        """An audit event about the run, written with the next change."""
        self.outbox.audit.append(self.rt.audit_event(kind, state, **fields))

    def requested(self, state: RunState, fresh: list[PendingCallState]) -> None:
        """The audit of calls that start waiting (written with the snapshot that stores them)."""
        for p in fresh:
            self.audit(
                "approval-requested" if p.kind == "approval" else "suspended",
                state,
                tool_call_id=p.tool_call_id,
                actor=p.requested_by,
                data={**requested_data(p), "suspend_payload": p.suspend_payload},
            )

    def complete(
        self, state: RunState, pending: PendingCallState, outcome: Outcome, lease: Lease
    ) -> None:
        """What a decided call produced under ``lease``: its claim is completed with the next
        change, fenced by the lease (refused, with the whole change, once taken over)."""
        self.outbox.completions.append(
            Completion(
                run_id=state.run_id,
                key=pending.claim_key,
                outcome=outcome.to_document(),
                owner=lease.owner,
                epoch=lease.epoch,
            )
        )
        if outcome.terminal:
            self.audit(
                "executed" if outcome.status != "denied" else "not-executed",
                state,
                tool_call_id=pending.tool_call_id,
                data={
                    "tool_name": pending.tool_name,
                    "status": outcome.status,
                    "args_fingerprint": pending.fingerprint,
                },
            )

    # -- committing ------------------------------------------------------------------------
    async def save(
        self,
        state: RunState,
        *,
        claim: ClaimRecord | None = None,
        granted: Sequence[GrantedClaim] = (),
    ) -> None:
        """Store the snapshot (version-checked) and the outbox in one transaction (with
        ``claim`` taken first, when given, or the claims standing grants take for calls of
        this snapshot, every use counted: ``GrantUnavailable`` naming the grant when one may no
        longer be used, and nothing is written)."""
        record = SnapshotRecord(
            run_id=state.run_id,
            agent_id=state.agent_id,
            thread_id=state.thread_id,
            resource_id=state.resource_id,
            suspended_at=utcnow(),
            version=self.version + 1,
            data=state.to_document(),
            decidable=bool(state.pending) and state.error is None,
            due_at=next_due(state.pending),  # the sweep reads the run then (issue 35)
        )
        await self._commit(snapshot=record, claim=claim, granted=granted)
        self.version = record.version

    async def save_continuing(self, state: RunState, pending: PendingCallState) -> Lease:
        """Store a decided call's outcome (the outbox) with the snapshot of a run that goes on
        (nothing is left pending: the model answers next) and a ``continued`` claim that
        leases the rest of the stretch to this instance. Returns that lease: renewed while the
        model answers, it lets recovery take the answer over if this process dies before the
        run's next change (which completes the claim) is stored."""
        now = utcnow()
        claim = ClaimRecord(
            run_id=state.run_id,
            key=f"{CONTINUE_PREFIX}{state.steps}",
            tool_call_id=None,  # not the call's claim: no surface reads it as the call's
            decision="continued",
            decided_by=None,
            decided_at=now,
            detail={
                "tool_call_id": pending.tool_call_id,
                "tool_name": pending.tool_name,
                "kind": pending.kind,
            },
            owner=self.rt.owner,
            lease_until=now + timedelta(seconds=self.rt.claim_lease_seconds),
        )
        await self.save(state, claim=claim)
        held = Lease.of(claim, self.rt.owner)
        self.owe(held)
        return held

    def owe(self, lease: Lease) -> None:
        """Complete the continuation claim of ``lease`` with the run's next change."""
        self.owed = Completion(
            run_id=lease.run_id,
            key=lease.key,
            outcome={"status": "answered"},
            owner=lease.owner,
            epoch=lease.epoch,
        )
        self.patient = True

    async def keep_failed(self, state: RunState, exc: Exception) -> None:
        """Store a failed run (messages, tool results) so ``retry_run`` can go on with it."""
        if state.pending or not state.messages:
            return
        state.error = f"{type(exc).__name__}: {exc}"
        try:
            await self.save(state)
        except Exception:
            logger.exception("could not store failed run %s for a retry", state.run_id)

    async def finish(self, state: RunState) -> None:
        """The run has nothing left to store: drop its snapshot, write the outbox."""
        if not self.version and not self.outbox and self.owed is None:
            return
        await self._commit(delete_snapshot=state.run_id if self.version else None)
        self.version = 0

    async def _commit(
        self,
        *,
        snapshot: SnapshotRecord | None = None,
        delete_snapshot: str | None = None,
        claim: ClaimRecord | None = None,
        granted: Sequence[GrantedClaim] = (),
    ) -> None:
        box = self.outbox
        owed = [self.owed] if self.owed is not None else []
        taken = [*([claim] if claim is not None else []), *(g.claim for g in granted)]
        change = StateChange(
            claim=taken[0] if taken else None,
            claims=taken[1:],
            snapshot=snapshot,
            delete_snapshot=delete_snapshot,
            completions=[*box.completions, *owed],
            thread=box.thread,
            messages=list(box.messages),
            audit=[*box.audit, *(g.event for g in granted)],
            grant_uses=[g.use for g in granted],
        )
        try:
            if change.completions or self.patient:  # a call was decided: its outcome and the
                # answer after it must not be lost to an outage
                existing = await patiently(
                    self.rt, run_id_of(change), lambda: self.rt.storage.commit(change)
                )
            else:
                existing = await self.rt.storage.commit(change)
        except StaleLease as exc:  # taken over: nothing was written, the run is not ours
            self.outbox = Outbox()
            raise LeaseLost(exc.run_id, exc.key, owner=exc.owner, epoch=exc.epoch) from None
        if existing is not None:  # the continuation is someone else's: nothing was written
            self.outbox = Outbox()
            raise LeaseLost(existing.run_id, existing.key, owner=existing.owner, epoch=0)
        self.outbox = Outbox()
        self.owed = None


def run_id_of(change: StateChange) -> str:
    """The run a change belongs to (for the log line of an outage)."""
    if change.completions:
        return change.completions[0].run_id
    if change.snapshot is not None:
        return change.snapshot.run_id
    return change.delete_snapshot or "?"


async def patiently(rt: Runtime, run_id: str, attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()``, waiting out a storage outage (the outcome of ``run_id`` is kept meanwhile),
    through the one retry helper (``storage.patiently``: exponential pauses with jitter).

    Tried again every fraction of a lease (``_MAX_RETRY_DELAY`` at most), so the write lands
    soon after storage is back, inside the grace recovery grants; logged once per outage; given
    up (``StorageUnavailable``) after ``_OUTCOME_RETRY_SECONDS`` or ten leases.
    """
    longest = min(_MAX_RETRY_DELAY, rt.claim_lease_seconds / 10)
    reported: list[BaseException] = []

    def outage(exc: BaseException) -> None:
        if not reported:
            logger.warning(
                "%s; the outcome of run %s is kept and written as soon as storage answers",
                exc,
                run_id,
            )
        reported.append(exc)

    def back() -> None:
        logger.info("storage answers again: the outcome of run %s is stored", run_id)

    return await store_patiently(
        attempt,
        retry_on=lambda exc: isinstance(exc, StorageUnavailable),
        seconds=max(_OUTCOME_RETRY_SECONDS, 10 * rt.claim_lease_seconds),
        first=min(0.1, longest),
        longest=longest,
        on_outage=outage,
        on_back=back,
    )
