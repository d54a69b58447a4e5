"""``SQLStorage``'s standing grants: the ``grants`` table (created by ``0009``).

Reads and revocation go through SQLAlchemy. A state change carrying a grant (``StateChange.grant``
or ``.grant_uses``) is written in one transaction with the rest of the change: on SQLite inside
the decision path's own transaction (``storage.sql.sqlite._grants``); on PostgreSQL the change's
``countersign_commit`` runs inside a transaction that then takes the change's further claims
(``StateChange.claims``, one ``countersign_commit`` each: a key taken meanwhile rolls
everything back and is returned) and inserts the grant or counts each use with ``UPDATE ...
WHERE uses < max_uses AND expires_at > now AND revoked_at IS NULL`` (the row lock orders
concurrent uses, a change's second use of a grant sees its first; the one past ``max_uses``
changes no row and rolls everything back).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage._change import StateChange
from storage._errors import GrantUnavailable
from storage._grants import listed, newest_first, refusal
from storage._records import ClaimRecord, GrantRecord
from storage.sql._database import SQLDatabase
from storage.sql._schema import grants, record_from_row, record_values
from storage.sql.postgres import _decision_path as _pg_hot


class SQLGrants:
    """The grant half of ``SQLStorage`` (on its ``SQLDatabase``)."""

    _db: SQLDatabase

    async def get_grant(self, grant_id: str) -> GrantRecord | None:
        stmt = grants.select().where(grants.c.grant_id == grant_id)

        async def work(conn: AsyncConnection) -> GrantRecord | None:
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(GrantRecord, row)

        return await self._db.read(work)

    async def list_grants(
        self,
        *,
        agent_id: str | None = None,
        tool_name: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        granted_by: str | None = None,
        active_at: datetime | None = None,
    ) -> list[GrantRecord]:
        stmt = grants.select()
        for column, value in (
            (grants.c.agent_id, agent_id),
            (grants.c.tool_name, tool_name),
            (grants.c.granted_by, granted_by),
        ):
            if value is not None:
                stmt = stmt.where(column == value)
        if thread_id is not None and resource_id is not None:
            stmt = stmt.where(
                sa.or_(grants.c.thread_id == thread_id, grants.c.resource_id == resource_id)
            )
        elif thread_id is not None:
            stmt = stmt.where(grants.c.thread_id == thread_id)
        elif resource_id is not None:
            stmt = stmt.where(grants.c.resource_id == resource_id)
        if active_at is not None:
            stmt = stmt.where(grants.c.revoked_at.is_(None), grants.c.expires_at > active_at)

        async def work(conn: AsyncConnection) -> list[GrantRecord]:
            return [record_from_row(GrantRecord, row) for row in (await conn.execute(stmt)).all()]

        found = await self._db.read(work)
        return newest_first(
            [
                g
                for g in found
                if listed(g, thread_id=thread_id, resource_id=resource_id, active_at=active_at)
            ]
        )

    async def count_grants(
        self, *, agent_id: str | None = None, active_at: datetime | None = None
    ) -> int:
        stmt = sa.select(sa.func.count()).select_from(grants)
        if agent_id is not None:
            stmt = stmt.where(grants.c.agent_id == agent_id)
        if active_at is not None:
            stmt = stmt.where(
                grants.c.revoked_at.is_(None),
                grants.c.expires_at > active_at,
                grants.c.uses < grants.c.max_uses,
            )

        async def work(conn: AsyncConnection) -> int:
            return int((await conn.execute(stmt)).scalar_one())

        return await self._db.read(work)

    async def revoke_grant(
        self, grant_id: str, *, revoked_by: str | None, at: datetime
    ) -> GrantRecord | None:
        revoke = (
            sa.update(grants)
            .where(grants.c.grant_id == grant_id, grants.c.revoked_at.is_(None))
            .values(revoked_at=at, revoked_by=revoked_by)
        )
        stmt = grants.select().where(grants.c.grant_id == grant_id)

        async def work(conn: AsyncConnection) -> GrantRecord | None:
            await conn.execute(revoke)
            row = (await conn.execute(stmt)).first()
            return None if row is None else record_from_row(GrantRecord, row)

        return await self._db.write(work)

    async def _commit_with_grant_on_postgres(self, change: StateChange) -> ClaimRecord | None:
        """``change`` (which carries a grant, grant uses or further claims) in one PostgreSQL
        transaction."""

        async def work(conn: AsyncConnection) -> ClaimRecord | None:
            first = dataclasses.replace(change, claims=())  # the further ones: one by one
            existing = await _commit(conn, first)
            if existing is not None:
                return existing
            for record in change.claims:
                if (taken := await _commit(conn, StateChange(claim=record))) is not None:
                    raise _Taken(taken)  # rolls back what this change wrote so far
            await write_grants(conn, change)
            return None

        try:
            return await self._db.write(work)
        except _Taken as taken:
            return taken.claim


class _Taken(Exception):
    """A further claim of a change was taken first: raised to roll the change back."""

    def __init__(self, claim: ClaimRecord) -> None:
        super().__init__(claim.key)
        self.claim = claim


async def _commit(conn: AsyncConnection, change: StateChange) -> ClaimRecord | None:
    """One ``countersign_commit`` of ``change`` on ``conn``, its refusals as our errors."""
    try:
        found = await conn.exec_driver_sql(_pg_hot.COMMIT, tuple(_pg_hot.change_arguments(change)))
    except sa.exc.DBAPIError as exc:
        ours = _ours(exc)
        if ours is None:
            raise
        raise ours from None
    return _pg_hot.claim_found(found.scalar())


async def write_grants(conn: AsyncConnection, change: StateChange) -> None:
    """Insert ``change.grant`` and count ``change.grant_uses`` in order on ``conn``
    (SQLAlchemy); ``GrantUnavailable`` when one may not happen (the caller's transaction rolls
    back)."""
    if change.grant is not None:
        await conn.execute(grants.insert().values(**record_values(change.grant)))
    for use in change.grant_uses:
        counted = await conn.execute(
            sa.update(grants)
            .where(
                grants.c.grant_id == use.grant_id,
                grants.c.revoked_at.is_(None),
                grants.c.expires_at > use.at,
                grants.c.uses < grants.c.max_uses,
            )
            .values(uses=grants.c.uses + 1)
        )
        if counted.rowcount != 1:
            stmt = grants.select().where(grants.c.grant_id == use.grant_id)
            row = (await conn.execute(stmt)).first()
            why = refusal(None if row is None else record_from_row(GrantRecord, row), use)
            raise why or GrantUnavailable(use.grant_id, "it may not be used now")


def _ours(exc: BaseException) -> Exception | None:
    """The error ``countersign_commit`` meant, from the asyncpg error wrapped in ``exc``."""
    cause: Any = exc
    while cause is not None:
        if isinstance(cause, asyncpg.PostgresError):
            return _pg_hot.refusal(cause)
        cause = getattr(cause, "orig", None) or cause.__cause__
    return None
