"""The values of the decision path's writes: one ``StateChange`` per transaction, and a tally.

A run's state change (suspend, decide, complete) touches several records; ``Storage.commit``
writes them all or none, so a crash never leaves half of a change behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from storage._errors import StaleLease
from storage._records import (
    JSON,
    ApprovalRecord,
    AuditEvent,
    ClaimRecord,
    GrantRecord,
    GrantUse,
    MessageRecord,
    SnapshotRecord,
    ThreadRecord,
)


@dataclass(frozen=True, kw_only=True)
class Completion:
    """Marks the claim ``(run_id, key)`` completed, as ``Storage.complete_claim`` does."""

    run_id: str
    """The run of the claim."""
    key: str
    """The claim key; the claim must exist before the change (else ``KeyError``)."""
    outcome: JSON
    """The result of the work the claim authorised."""
    owner: str | None = None
    """The owner the claim was held by when its work ran; with it the completion is fenced:
    unless the stored claim still has this ``owner`` and ``epoch``, the whole change is refused
    with ``StaleLease`` and writes nothing (checked in the same transaction / statement /
    script that writes). None: not fenced (an administrative completion)."""
    epoch: int = 0
    """The lease epoch the owner holds (``ClaimRecord.epoch`` when it was claimed or taken
    over); checked only with ``owner``."""


@dataclass(frozen=True, kw_only=True)
class StateChange:
    """Everything one state change of a run writes, applied by ``Storage.commit`` atomically.

    Applied in field order. ``claim`` (with ``claims``) is taken first with the single-use
    semantics of ``Storage.claim``: when any of their keys is already claimed nothing at all is
    written and ``commit`` returns that stored claim. A snapshot whose version does not follow
    the stored one raises ``SnapshotVersionConflict``, a completion of a missing claim
    ``KeyError``, a fenced completion whose owner or epoch is no longer the claim's
    ``StaleLease`` (checked before the snapshot: a stale owner learns it lost the lease, not
    that the run moved on); each writes nothing: no outcome, no snapshot, no messages, no audit.

    Example:
        >>> change = StateChange(claim=claim, audit=[decided_event])  # doctest: +SKIP
        >>> existing = await store.commit(change)  # doctest: +SKIP
    """

    claim: ClaimRecord | None = None
    """A decision to take first (single-use, as ``Storage.claim``)."""
    claims: Sequence[ClaimRecord] = ()
    """More decisions taken with ``claim`` (which must be given), all or none: the other calls
    of one model step that standing grants approve. Keys distinct from each other and from
    ``claim``'s (else ``ValueError`` here)."""
    completions: Sequence[Completion] = ()
    """Claims to mark completed with their outcomes (claims that existed before the change)."""
    snapshot: SnapshotRecord | None = None
    """A snapshot to save with the version check of ``Storage.save_snapshot``."""
    delete_snapshot: str | None = None
    """A run id whose snapshot (and approvals) is deleted, as ``Storage.delete_snapshot``."""
    thread: ThreadRecord | None = None
    """A memory thread to create or update, as ``Storage.save_thread``."""
    messages: Sequence[MessageRecord] = ()
    """Messages appended to their threads in order, as ``Storage.append_messages``."""
    audit: Sequence[AuditEvent] = ()
    """Audit events appended in order."""
    grant: GrantRecord | None = None
    """A standing grant to store (the approval that creates it is this change's claim)."""
    grant_uses: Sequence[GrantUse] = ()
    """Uses of standing grants, counted with this change (the claims they approve), in order:
    when a grant may not be used now (``storage._grants.refusal``, counting the uses of the
    same grant before it in this change, so a grant with one use left refuses a change that
    uses it twice) the whole change is refused with ``GrantUnavailable`` naming that grant and
    writes nothing. Checked after the claims' single use."""

    def __post_init__(self) -> None:
        if not self.claims:
            return
        if self.claim is None:
            raise ValueError("StateChange.claims needs a first claim (StateChange.claim)")
        keys = [(c.run_id, c.key) for c in self.every_claim]
        if len(set(keys)) != len(keys):
            raise ValueError(f"a StateChange claims each key once: {[k for _, k in keys]}")

    @property
    def every_claim(self) -> tuple[ClaimRecord, ...]:
        """``claim`` and ``claims``, in that order (empty without ``claim``)."""
        return () if self.claim is None else (self.claim, *self.claims)


@dataclass(frozen=True, kw_only=True)
class ApprovalTally:
    """What ``Storage.add_approval`` found, atomically with the add."""

    added: bool
    """False when this approver had already approved this key (or the key was claimed)."""
    approvals: list[ApprovalRecord] = field(default_factory=list)
    """Every approval of this run and key after the add, oldest first."""
    claim: ClaimRecord | None = None
    """The claim of the key when it was already claimed (then nothing was added)."""


def fenced(done: Completion, held: ClaimRecord) -> StaleLease:
    """The refusal of the fenced completion ``done``: the stored claim is ``held`` by another
    owner or epoch (every backend raises it the same way)."""
    return StaleLease(
        done.run_id,
        done.key,
        owner=done.owner,
        epoch=done.epoch,
        held=f"{held.owner!r} at epoch {held.epoch}",
    )


@dataclass(frozen=True, kw_only=True)
class DecisionBatch:
    """Several decisions of one run, written by ``Storage.commit_batch`` all or none.

    ``approvals`` are added first (each only when its key is not claimed and its approver has
    not approved that key yet), then ``claims`` are taken (each only when its key is not
    claimed), then ``audit`` is appended. When any of them is refused nothing at all is
    written and ``commit_batch`` returns a ``BatchRefusal`` naming the first one refused.

    Example:
        >>> batch = DecisionBatch(claims=[a, b], approvals=[vote], audit=events)  # doctest: +SKIP
        >>> refused = await store.commit_batch(batch)  # doctest: +SKIP
    """

    claims: Sequence[ClaimRecord] = ()
    """Decisions to take, single-use as ``Storage.claim`` (distinct keys)."""
    approvals: Sequence[ApprovalRecord] = ()
    """Quorum approvals to add, as ``Storage.add_approval`` (distinct keys)."""
    audit: Sequence[AuditEvent] = ()
    """Audit events appended in order."""


@dataclass(frozen=True, kw_only=True)
class BatchRefusal:
    """Why ``Storage.commit_batch`` wrote nothing: the first decision of the batch refused."""

    run_id: str
    """The run of the refused decision."""
    key: str
    """The claim key of the refused decision."""
    claim: ClaimRecord | None = None
    """The stored claim when the key was already claimed (decided before)."""
    approver: str | None = None
    """The approver when the refusal is their second approval of the key (no claim yet)."""
