"""``SQLStorage.prune``: a few set-based DELETE statements in one write transaction.

The rules are ``storage._prune``'s. In order: the approvals, then the snapshots, of failed runs
older than the cutoff; then completed claims, approvals, card records and escalation steps of
runs without a snapshot; then (with ``audit``) old audit events of runs that are not pending;
then expired key→value rows; then grants that ended before the cutoff (expired, revoked, used
up: one statement each, through ``grants(expires_at)``, ``(revoked_at)``, ``(created_at)``,
``0013``). Each statement finds its rows through an index (``0004`` added
those on ``claims(status, completed_at)`` and ``approvals(approved_at)``, ``0007``
``cards(posted_at)``, ``0010`` ``escalations(escalated_at)``).
The outbox is never pruned: an entry stays until it is made.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._prune import PruneReport
from storage._records import utcnow
from storage.sql._schema import (
    approvals,
    audit,
    cards,
    claims,
    escalations,
    grants,
    kv,
    snapshots,
)


def _failed_runs(before: datetime) -> sa.Select[tuple[str]]:
    """Run ids of failed (not decidable) snapshots older than ``before`` with no claim in flight."""
    in_flight = (
        sa.select(claims.c.run_id)
        .where(claims.c.run_id == snapshots.c.run_id, claims.c.status == "claimed")
        .exists()
    )
    return sa.select(snapshots.c.run_id).where(
        snapshots.c.decidable == sa.false(), snapshots.c.suspended_at < before, ~in_flight
    )


def _without_snapshot(run_id: sa.Column[str]) -> sa.ColumnElement[bool]:
    return ~sa.select(snapshots.c.run_id).where(snapshots.c.run_id == run_id).exists()


async def prune(conn: AsyncConnection, *, before: datetime, audit_too: bool) -> PruneReport:
    """Delete on ``conn`` (inside the caller's transaction) what ``before`` lets go."""
    failed = _failed_runs(before)
    failed_approvals = await conn.execute(
        approvals.delete().where(approvals.c.run_id.in_(failed.scalar_subquery()))
    )
    failed_snapshots = await conn.execute(
        snapshots.delete().where(snapshots.c.run_id.in_(failed.scalar_subquery()))
    )
    old_approvals = await conn.execute(
        approvals.delete().where(
            approvals.c.approved_at < before, _without_snapshot(approvals.c.run_id)
        )
    )
    old_claims = await conn.execute(
        claims.delete().where(
            claims.c.status == "completed",
            sa.or_(
                claims.c.completed_at < before,
                sa.and_(claims.c.completed_at.is_(None), claims.c.decided_at < before),
            ),
            _without_snapshot(claims.c.run_id),
        )
    )
    old_cards = await conn.execute(
        cards.delete().where(cards.c.posted_at < before, _without_snapshot(cards.c.run_id))
    )
    old_steps = await conn.execute(
        escalations.delete().where(
            escalations.c.escalated_at < before, _without_snapshot(escalations.c.run_id)
        )
    )
    events = 0
    if audit_too:
        pending = (
            sa.select(snapshots.c.run_id)
            .where(snapshots.c.run_id == audit.c.run_id, snapshots.c.decidable.is_(True))
            .exists()
        )
        events = (await conn.execute(audit.delete().where(audit.c.at < before, ~pending))).rowcount
    values = await conn.execute(kv.delete().where(kv.c.expires_at <= utcnow()))
    # storage._grants.ended_before, one statement per index: expired, revoked, used up (a
    # used-up grant counts from when it was made; its uses are not timed).
    old_grants = 0
    for ended in (
        grants.c.expires_at < before,
        grants.c.revoked_at < before,
        sa.and_(grants.c.created_at < before, grants.c.uses >= grants.c.max_uses),
    ):
        old_grants += (await conn.execute(grants.delete().where(ended))).rowcount
    return PruneReport(
        snapshots=failed_snapshots.rowcount,
        claims=old_claims.rowcount,
        approvals=failed_approvals.rowcount + old_approvals.rowcount,
        cards=old_cards.rowcount,
        escalations=old_steps.rowcount,
        audit_events=events,
        values=values.rowcount,
        grants=old_grants,
    )
