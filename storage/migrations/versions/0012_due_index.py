"""The sweep's index: ``snapshots.due_at``, when something is next due for a run (issue 35).

- ``snapshots.due_at`` (nullable timestamp): the earliest expiry, reminder or escalation step of
  the run's pending calls, written with the snapshot by whoever saves it (NULL: nothing due, and
  for every snapshot stored before this revision until it is saved again or swept).
- ``ix_snapshots_agent_id_due_at_run_id``: ``list_due`` reads an agent's due runs from it in
  ``(due_at, run_id)`` order, by key; a run not due is never read.
- ``countersign_commit`` replaced (same signature) on PostgreSQL: the snapshot it writes carries
  ``due_at``.

A decidable run stored before this revision is due at once (``due_at = suspended_at``): the next
sweep reads it once and gives it its due moment (``Storage.reschedule``).

Downgrade drops the index and the column and restores ``0008``'s function.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from storage.sql._schema import UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEX = "ix_snapshots_agent_id_due_at_run_id"

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
                                   version, data, decidable, due_at)
            SELECT s.run_id, s.agent_id, s.thread_id, s.resource_id, s.suspended_at,
                   s.version, snapshot_data::json, s.decidable, s.due_at
            FROM json_to_record(part) AS s(
                run_id text, agent_id text, thread_id text, resource_id text,
                suspended_at timestamptz, version int, decidable boolean, due_at timestamptz)
            ON CONFLICT (run_id) DO NOTHING;
            saved := FOUND;
        ELSIF (part ->> 'version')::int > 1 THEN
            UPDATE snapshots AS t
            SET agent_id = s.agent_id, thread_id = s.thread_id, resource_id = s.resource_id,
                suspended_at = s.suspended_at, version = s.version, data = snapshot_data::json,
                decidable = s.decidable, due_at = s.due_at
            FROM json_to_record(part) AS s(
                run_id text, agent_id text, thread_id text, resource_id text,
                suspended_at timestamptz, version int, decidable boolean, due_at timestamptz)
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
    op.add_column("snapshots", sa.Column("due_at", UTCDateTime(), nullable=True))
    op.execute("UPDATE snapshots SET due_at = suspended_at WHERE decidable")
    op.create_index(_INDEX, "snapshots", ["agent_id", "due_at", "run_id"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_COMMIT)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        before = importlib.import_module("storage.migrations.versions.0008_claim_epochs")
        op.execute(before._COMMIT)
    op.drop_index(_INDEX, table_name="snapshots")
    with op.batch_alter_table("snapshots") as batch:
        batch.drop_column("due_at")
