"""``PruneReport``: what ``Storage.prune`` removed, and the rules every backend follows.

What goes (each backend applies the same rules, atomically per batch or transaction):

- **Failed runs**: a snapshot that is not ``decidable`` (the run failed and waits for
  ``retry_run``, or stopped between steps), last written before ``before``, whose run holds no
  claim still ``claimed``: deleted as ``delete_snapshot`` does, with its approvals. An old
  failed run is given up; a recent one stays retryable.
- **Claims** of runs without a snapshot (finished, or failed and pruned just now) that are
  ``completed`` before ``before`` (``decided_at`` when a completed claim has no
  ``completed_at``). A claim still ``claimed`` belongs to work in flight: never deleted.
- **Approvals** of runs without a snapshot approved before ``before`` (an approval that came
  after its run ended).
- **Card records** (where an edge posted a call's card) of runs without a snapshot posted before
  ``before``: they go with their ended run's claims. Pruning audit never touches them.
- **Escalation steps** of runs without a snapshot escalated before ``before`` (Redis expires
  them by itself, a month after a run's last step: always 0 there).
- **Audit events** before ``before``, only with ``audit=True``, except those of a pending run.
- **Expired key→value entries** (Redis expires them by itself: always 0 there).
- **Standing grants** that can approve nothing more since before ``before``: expired before it,
  revoked before it, or used up and created before it (``storage._grants.ended_before``). A
  grant usable now is never deleted; its uses stay in the audit log.

What stays, whatever ``before`` says: everything of a pending (``decidable``) run (its
snapshot, claims, approvals, card records and audit events), every claim still ``claimed``, memory
threads and their messages, and the outbox (an entry stays until it is made and removed).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class PruneReport:
    """How many records of each kind ``Storage.prune`` deleted.

    Example:
        >>> report = await store.prune(before=utcnow() - timedelta(days=30))  # doctest: +SKIP
        >>> report.claims  # doctest: +SKIP
        12
    """

    snapshots: int = 0
    """Snapshots of failed (not decidable) runs older than the cutoff."""
    claims: int = 0
    """Completed claims of runs that have no snapshot (any more)."""
    approvals: int = 0
    """Approvals of runs that have no snapshot (any more)."""
    cards: int = 0
    """Card records of runs that have no snapshot (any more)."""
    escalations: int = 0
    """Escalation steps of runs that have no snapshot (any more)."""
    audit_events: int = 0
    """Audit events older than the cutoff (only with ``audit=True``)."""
    values: int = 0
    """Expired key→value entries."""
    grants: int = 0
    """Standing grants that expired, were revoked or were used up before the cutoff
    (``storage._grants.ended_before``)."""

    @property
    def total(self) -> int:
        """Every record deleted, of any kind."""
        return (
            self.snapshots
            + self.claims
            + self.approvals
            + self.cards
            + self.escalations
            + self.audit_events
            + self.values
            + self.grants
        )
