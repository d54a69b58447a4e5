"""Lease epochs: the fencing token that makes a takeover final (SPEC 3.4).

- ``claims.epoch`` (integer, 0 for every claim stored before): raised by one on each takeover
  (``take_over_expired_claims``). A renewal names the epoch it holds and is refused after a
  takeover (``renew_lease``'s ``UPDATE ... WHERE owner = ... AND epoch = ...``).
- ``countersign_commit`` replaced (same signature): a completion may carry the ``owner`` and
  ``epoch`` it was taken with; the ``UPDATE`` that completes the claim checks both, so the fence
  is inside the one statement of the state change. A stale one raises SQLSTATE ``CS423`` (the
  details as a JSON array in DETAIL) and the statement's transaction rolls back: no outcome, no
  snapshot, no messages, no audit. The claim it inserts stores its ``epoch`` too.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COMMIT = """
CREATE OR REPLACE FUNCTION countersign_commit(
    new_claim json, claim_detail text, claim_outcome text,
    completions json, outcomes text[],
    new_snapshot json, snapshot_data text,
    deleted_run text,
    new_thread json, thread_metadata text,
    new_messages json, message_contents text[],
    new_audit json, audit_data text[]) RETURNS json
LANGUAGE plpgsql AS $body$
DECLARE
    part json := new_claim;
    done record;
    stored json;
    saved boolean;
BEGIN
    IF part IS NOT NULL THEN
        INSERT INTO claims (run_id, key, tool_call_id, decision, decided_by, decided_at,
                            detail, status, outcome, completed_at, owner, lease_until, epoch)
        SELECT c.run_id, c.key, c.tool_call_id, c.decision, c.decided_by, c.decided_at,
               claim_detail::json, c.status, claim_outcome::json, c.completed_at, c.owner,
               c.lease_until, coalesce(c.epoch, 0)
        FROM json_to_record(part) AS c(
            run_id text, key text, tool_call_id text, decision text, decided_by text,
            decided_at timestamptz, status text, completed_at timestamptz, owner text,
            lease_until timestamptz, epoch int)
        ON CONFLICT (run_id, key) DO NOTHING;
        IF NOT FOUND THEN
            SELECT row_to_json(c) INTO stored FROM claims AS c
            WHERE c.run_id = part ->> 'run_id' AND c.key = part ->> 'key';
            RETURN stored;
        END IF;
    END IF;

    FOR done IN
        SELECT d.run_id, d.key, d.at, d.owner, d.epoch, d.n
        FROM ROWS FROM (json_to_recordset(completions) AS (
            run_id text, key text, at timestamptz, owner text, epoch int)) WITH ORDINALITY
            AS d(run_id, key, at, owner, epoch, n)
    LOOP
        UPDATE claims AS t SET status = 'completed', outcome = outcomes[done.n]::json,
                               completed_at = done.at
        WHERE t.run_id = done.run_id AND t.key = done.key
          AND (done.owner IS NULL OR (t.owner = done.owner AND t.epoch = done.epoch));
        IF NOT FOUND THEN
            SELECT row_to_json(c) INTO stored FROM claims AS c
            WHERE c.run_id = done.run_id AND c.key = done.key;
            IF stored IS NULL THEN
                RAISE EXCEPTION 'no claim to complete' USING ERRCODE = 'CS404',
                    DETAIL = json_build_array(done.run_id, done.key)::text;
            END IF;
            RAISE EXCEPTION 'lease lost' USING ERRCODE = 'CS423',
                DETAIL = json_build_array(done.run_id, done.key, done.owner, done.epoch,
                                          stored ->> 'owner', stored ->> 'epoch')::text;
        END IF;
    END LOOP;

    part := new_snapshot;
    IF part IS NOT NULL THEN
        saved := false;
        IF (part ->> 'version')::int = 1 THEN
            INSERT INTO snapshots (run_id, agent_id, thread_id, resource_id, suspended_at,
                                   version, data, decidable)
            SELECT s.run_id, s.agent_id, s.thread_id, s.resource_id, s.suspended_at,
                   s.version, snapshot_data::json, s.decidable
            FROM json_to_record(part) AS s(
                run_id text, agent_id text, thread_id text, resource_id text,
                suspended_at timestamptz, version int, decidable boolean)
            ON CONFLICT (run_id) DO NOTHING;
            saved := FOUND;
        ELSIF (part ->> 'version')::int > 1 THEN
            UPDATE snapshots AS t
            SET agent_id = s.agent_id, thread_id = s.thread_id, resource_id = s.resource_id,
                suspended_at = s.suspended_at, version = s.version, data = snapshot_data::json,
                decidable = s.decidable
            FROM json_to_record(part) AS s(
                run_id text, agent_id text, thread_id text, resource_id text,
                suspended_at timestamptz, version int, decidable boolean)
            WHERE t.run_id = s.run_id AND t.version = s.version - 1;
            saved := FOUND;
        END IF;
        IF NOT saved THEN
            RAISE EXCEPTION 'snapshot version conflict' USING ERRCODE = 'CS409',
                DETAIL = json_build_array(part ->> 'run_id', (part ->> 'version')::int - 1)::text;
        END IF;
    END IF;

    IF deleted_run IS NOT NULL THEN
        DELETE FROM snapshots WHERE run_id = deleted_run;
        DELETE FROM approvals WHERE run_id = deleted_run;
    END IF;

    part := new_thread;
    IF part IS NOT NULL THEN
        INSERT INTO threads (thread_id, resource_id, created_at, updated_at, metadata)
        SELECT t.thread_id, t.resource_id, t.created_at, t.updated_at, thread_metadata::json
        FROM json_to_record(part) AS t(
            thread_id text, resource_id text, created_at timestamptz, updated_at timestamptz)
        ON CONFLICT (thread_id) DO UPDATE SET
            resource_id = excluded.resource_id, created_at = excluded.created_at,
            updated_at = excluded.updated_at, metadata = excluded.metadata;
    END IF;

    IF new_messages IS NOT NULL THEN
        INSERT INTO messages (id, thread_id, resource_id, run_id, role, content, created_at)
        SELECT m.id, m.thread_id, m.resource_id, m.run_id, m.role,
               message_contents[m.n]::json, m.created_at
        FROM ROWS FROM (json_to_recordset(new_messages) AS (
            id text, thread_id text, resource_id text, run_id text, role text,
            created_at timestamptz)) WITH ORDINALITY
            AS m(id, thread_id, resource_id, run_id, role, created_at, n)
        ORDER BY m.n;
    END IF;

    IF new_audit IS NOT NULL THEN
        INSERT INTO audit (id, at, kind, run_id, tool_call_id, thread_id, agent_id, actor,
                           source, data)
        SELECT e.id, e.at, e.kind, e.run_id, e.tool_call_id, e.thread_id, e.agent_id, e.actor,
               e.source, audit_data[e.n]::json
        FROM ROWS FROM (json_to_recordset(new_audit) AS (
            id text, at timestamptz, kind text, run_id text, tool_call_id text, thread_id text,
            agent_id text, actor text, source text)) WITH ORDINALITY
            AS e(id, at, kind, run_id, tool_call_id, thread_id, agent_id, actor, source, n)
        ORDER BY e.n;
    END IF;
    RETURN NULL;
END
$body$
"""


def upgrade() -> None:
    op.add_column("claims", sa.Column("epoch", sa.Integer(), nullable=False, server_default="0"))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_COMMIT)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        before = importlib.import_module(
            "storage.migrations.versions.0005_postgres_state_functions"
        )
        op.execute(before._COMMIT)
    with op.batch_alter_table("claims") as batch:
        batch.drop_column("epoch")
