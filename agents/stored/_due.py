"""When something is next due for a pending approval, and so for its run (issue 35).

A pending approval is looked at on its own timeline, from when it was presented (``since``):
once ``FIRST_LOOK_SECONDS`` after (an edge whose process stopped before posting its card posts
it then), at each of its rule's escalation steps it has not been through, at ``REMINDER_AT`` of
its window (the reminder; after an Extend, as long before the new ``expires_at``: ``remind_at``),
and at its ``expires_at``. A run is due at the earliest moment of any
of its approvals: storage indexes it (``SnapshotRecord.due_at``) and the sweep reads only the
runs due (``Storage.list_due``), then moves each to its next moment (``Storage.reschedule``).

A snapshot is saved with the earliest moment of the whole timeline (``next_due(calls)``): never
late, sometimes early (a step or reminder done already reads the run once more, then it moves
on). The sweep passes ``after=now``: the moments it just handled are behind it, but an expiry
stays due until the call is decided (an expiry that did not take is tried again).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from agents._results import PendingToolCall

FIRST_LOOK_SECONDS = 30.0
"""A pending approval is looked at once this long after it was presented (a card lost with its
process is posted then)."""
REMINDER_AT = 0.8
"""Fraction of a call's window (``suspended_at`` → ``expires_at``) after which it is reminded."""


def remind_at(since: datetime, expires_at: datetime, ttl_seconds: float | None = None) -> datetime:
    """When a call presented at ``since`` that expires at ``expires_at`` is reminded: at
    ``REMINDER_AT`` of its window. A call kept waiting longer than its TTL (``ttl_seconds``: an
    Extend moved its ``expires_at``) is reminded as long before its new expiry as a call is
    before its first: at ``REMINDER_AT`` of the TTL it was given once more."""
    window = expires_at - since
    if ttl_seconds is None or window <= timedelta(seconds=ttl_seconds):
        return since + window * REMINDER_AT
    return expires_at - timedelta(seconds=ttl_seconds) * (1 - REMINDER_AT)


def _moments(call: PendingToolCall, since: datetime) -> list[datetime]:
    steps = call.requirement.escalate[call.escalation_step :]
    moments = [since + timedelta(seconds=FIRST_LOOK_SECONDS)]
    moments += [since + timedelta(seconds=step.after_seconds) for step in steps]
    if call.expires_at is not None:
        moments += [remind_at(since, call.expires_at, call.requirement.ttl_seconds)]
        moments.append(call.expires_at)
    return moments


def next_due(
    calls: Iterable[PendingToolCall],
    *,
    after: datetime | None = None,
    since: datetime | None = None,
) -> datetime | None:
    """The earliest moment anything is due for ``calls`` (their pending approvals; a call that
    waits for data has no timeline); with ``after`` the earliest one after it, an expiry already
    past counting as due. ``since``: when a call without its own ``suspended_at`` was
    presented. None: nothing is ever due.

    Example:
        >>> due = next_due(run.tool_calls, after=utcnow())  # doctest: +SKIP
    """
    found: list[datetime] = []
    for call in calls:
        presented = call.suspended_at or since
        if not call.requires_approval or presented is None:
            continue
        moments = _moments(call, presented)
        if after is not None:
            moments = [m for m in moments if m > after]
            if call.expires_at is not None and call.expires_at <= after:
                moments.append(call.expires_at)  # still pending past its expiry: due until decided
        found.extend(moments)
    return min(found, default=None)
