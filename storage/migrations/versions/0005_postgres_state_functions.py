"""PostgreSQL: the decision path's writes and reads as functions, one round trip each.

- ``countersign_commit(new_claim, claim_detail, claim_outcome, completions, outcomes,
  new_snapshot, snapshot_data, deleted_run, new_thread, thread_metadata, new_messages,
  message_contents, new_audit, audit_data) RETURNS json``: a whole ``StateChange`` (NULL for an
  absent part) applied as ``storage.sql.sqlite._decision_path.apply`` does on SQLite: the claim
  first (when its
  key is taken nothing is written and the stored claim is returned), then completions,
  snapshot (version checked), snapshot deletion with its approvals, thread, messages and audit
  in order. A missing claim raises SQLSTATE ``CS404``, a version conflict ``CS409`` (the
  details as a JSON array in DETAIL); the statement's transaction rolls back.
- ``countersign_load_run(run_id text) RETURNS json``: the snapshot, claims and approvals of a
  run from one statement (so one consistent snapshot of the database). PL/pgSQL rather than
  SQL: it keeps the plan between calls (a SQL function is planned on every call, ~0.12 ms).
- ``countersign_add_approval(approval json) RETURNS json``: ``add_approval``'s advisory lock on
  the call (the key ``SQLStorage`` always used), then the claim check, the insert and the tally.

Each part comes as a JSON document of its plain columns (read by ``json_to_record``) and,
apart, the text of its JSON columns (a ``text[]`` for a list of rows), stored with a plain
``::json`` cast: PostgreSQL keeps that text as it is, so key order survives, the stored text is
what SQLAlchemy stores, and a ``\\u0000`` inside a document is stored too (PostgreSQL's JSON
functions refuse to read one). A document per part rather than one for the whole change: that
one would be parsed again for every part (~0.03 ms a call).

The functions are created in the schema the migration runs in (``?schema=`` sets the search
path) and find their tables through the caller's search path, like every other statement of
``SQLStorage``. SQLite: nothing to do.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-20
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
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
                            detail, status, outcome, completed_at, owner, lease_until)
        SELECT c.run_id, c.key, c.tool_call_id, c.decision, c.decided_by, c.decided_at,
               claim_detail::json, c.status, claim_outcome::json, c.completed_at, c.owner,
               c.lease_until
        FROM json_to_record(part) AS c(
            run_id text, key text, tool_call_id text, decision text, decided_by text,
            decided_at timestamptz, status text, completed_at timestamptz, owner text,
            lease_until timestamptz)
        ON CONFLICT (run_id, key) DO NOTHING;
        IF NOT FOUND THEN
            SELECT row_to_json(c) INTO stored FROM claims AS c
            WHERE c.run_id = part ->> 'run_id' AND c.key = part ->> 'key';
            RETURN stored;
        END IF;
    END IF;

    FOR done IN
        SELECT d.run_id, d.key, d.at, d.n
        FROM ROWS FROM (json_to_recordset(completions) AS (
            run_id text, key text, at timestamptz)) WITH ORDINALITY AS d(run_id, key, at, n)
    LOOP
        UPDATE claims SET status = 'completed', outcome = outcomes[done.n]::json,
                          completed_at = done.at
        WHERE run_id = done.run_id AND key = done.key;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no claim to complete' USING ERRCODE = 'CS404',
                DETAIL = json_build_array(done.run_id, done.key)::text;
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

_LOAD_RUN = """
CREATE OR REPLACE FUNCTION countersign_load_run(wanted text) RETURNS json
LANGUAGE plpgsql STABLE AS $body$
BEGIN
    RETURN json_build_object(
        'snapshot', (SELECT row_to_json(s) FROM snapshots AS s WHERE s.run_id = wanted),
        'claims', (SELECT json_agg(c ORDER BY c.decided_at, c.key)
                   FROM claims AS c WHERE c.run_id = wanted),
        'approvals', (SELECT json_agg(a ORDER BY a.approved_at, a.key, a.approver)
                      FROM approvals AS a WHERE a.run_id = wanted));
END
$body$
"""

_ADD_APPROVAL = """
CREATE OR REPLACE FUNCTION countersign_add_approval(approval json) RETURNS json
LANGUAGE plpgsql AS $body$
DECLARE
    wanted_run text := approval ->> 'run_id';
    wanted_key text := approval ->> 'key';
    held json;
    added boolean := false;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext(wanted_run || '#' || wanted_key));
    SELECT row_to_json(c) INTO held FROM claims AS c
    WHERE c.run_id = wanted_run AND c.key = wanted_key;
    IF held IS NULL THEN
        INSERT INTO approvals (run_id, key, approver, approved_at)
        SELECT a.run_id, a.key, a.approver, a.approved_at
        FROM json_to_record(approval) AS a(
            run_id text, key text, approver text, approved_at timestamptz)
        ON CONFLICT (run_id, key, approver) DO NOTHING;
        added := FOUND;
    END IF;
    RETURN json_build_object(
        'added', added,
        'claim', held,
        'approvals', (SELECT json_agg(a ORDER BY a.approved_at, a.key, a.approver)
                      FROM approvals AS a WHERE a.run_id = wanted_run AND a.key = wanted_key));
END
$body$
"""

_FUNCTIONS = (
    (
        "countersign_commit(json, text, text, json, text[], json, text, text, json, text,"
        " json, text[], json, text[])"
    ),
    "countersign_load_run(text)",
    "countersign_add_approval(json)",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for create in (_COMMIT, _LOAD_RUN, _ADD_APPROVAL):
        op.execute(create)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for signature in _FUNCTIONS:
        op.execute(f"DROP FUNCTION IF EXISTS {signature}")
