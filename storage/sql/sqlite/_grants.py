"""A state change's standing grants on SQLite's decision path: the new grant inserted, the used
ones counted, inside the transaction of ``storage.sql.sqlite._decision_path.apply`` (plain SQL on
the driver, values converted as ``storage.sql._schema`` converts them).

The use is one ``UPDATE ... WHERE`` on the grant's row: SQLite has one writer at a time, so each use
counts the ones before it (this change's own too) and the use past ``max_uses`` changes no row. Then
``GrantUnavailable`` rolls the whole transaction back (the claim with it).
"""

from __future__ import annotations

from storage._change import StateChange
from storage._errors import GrantUnavailable
from storage._grants import refusal
from storage._records import ClaimRecord, GrantRecord
from storage.sql.sqlite._decision_path import Connection
from storage.sql.sqlite._decision_path import apply as apply_without_grants
from storage.sql.sqlite._values import json_text, optional_timestamp, parse_time, timestamp

_GRANT_COLUMNS = (
    "grant_id, agent_id, tool_name, agent_path, thread_id, resource_id, pins, granted_by,"
    " created_at, expires_at, max_uses, uses, revoked_at, revoked_by, free_args, run_id,"
    " tool_call_id, rule, definition_digest"
)
_INSERT_GRANT = f"INSERT INTO grants ({_GRANT_COLUMNS}) VALUES ({', '.join('?' * 19)})"
_USE_GRANT = (
    "UPDATE grants SET uses = uses + 1 WHERE grant_id = ? AND revoked_at IS NULL"
    " AND expires_at > ? AND uses < max_uses"
)
_GRANT_OF_ID = f"SELECT {_GRANT_COLUMNS} FROM grants WHERE grant_id = ?"


def apply(conn: Connection, change: StateChange) -> ClaimRecord | None:
    """``storage.sql.sqlite._decision_path.apply``, then the change's grant, in the caller's
    transaction (nothing of the grant when the claim was taken first)."""
    existing = apply_without_grants(conn, change)
    if existing is None and (change.grant is not None or change.grant_uses):
        write_grants(conn, change)
    return existing


def write_grants(conn: Connection, change: StateChange) -> None:
    """Insert ``change.grant`` and count ``change.grant_uses`` in order, each seeing the ones
    before it (``GrantUnavailable`` when one may not happen: the caller rolls back)."""
    if change.grant is not None:
        conn.execute(_INSERT_GRANT, _row(change.grant))
    for use in change.grant_uses:
        if conn.execute(_USE_GRANT, (use.grant_id, timestamp(use.at))).rowcount != 1:
            row = conn.execute(_GRANT_OF_ID, (use.grant_id,)).fetchone()
            why = refusal(None if row is None else _record(row), use)
            raise why or GrantUnavailable(use.grant_id, "it may not be used now")


def _row(g: GrantRecord) -> tuple[object, ...]:
    return (
        g.grant_id,
        g.agent_id,
        g.tool_name,
        json_text(g.agent_path),
        g.thread_id,
        g.resource_id,
        json_text(g.pins),
        g.granted_by,
        timestamp(g.created_at),
        timestamp(g.expires_at),
        g.max_uses,
        g.uses,
        optional_timestamp(g.revoked_at),
        g.revoked_by,
        json_text(g.free_args),
        g.run_id,
        g.tool_call_id,
        g.rule,
        g.definition_digest,
    )


def _record(row: tuple[object, ...]) -> GrantRecord:
    """Only the fields ``refusal`` reads need to be right here (the rest is not returned)."""
    return GrantRecord(
        grant_id=str(row[0]),
        agent_id=str(row[1]),
        tool_name=str(row[2]),
        agent_path=[],
        thread_id=None,
        resource_id=None,
        pins={},
        granted_by=str(row[7]),
        created_at=parse_time(str(row[8])),
        expires_at=parse_time(str(row[9])),
        max_uses=int(str(row[10])),
        uses=int(str(row[11])),
        revoked_at=None if row[12] is None else parse_time(str(row[12])),
    )
