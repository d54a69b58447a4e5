"""SPEC 3.4: on SQLite the transaction that claims a call is synced to disk before its tool runs.

Every other write stays at ``synchronous = NORMAL`` (WAL: durable against a process crash,
not against power loss); the claim alone runs at ``FULL``, so an OS crash right after a tool
ran can never forget the claim and re-open its approval. Seen at the driver: the statements
SQLite runs, in order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import Completion, StateChange
from tests.sqlite_trace import traced_sqlite
from tests.storage.records import claim, snapshot
from tools import ToolContext, create_tool

FULL, NORMAL = "PRAGMA synchronous = FULL", "PRAGMA synchronous = NORMAL"


async def test_a_claim_commits_at_full_and_other_writes_at_normal(tmp_path: Path) -> None:
    store, trace = traced_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'durable.db'}")
    try:
        await store.save_snapshot(snapshot("run-1"))
        with trace.counting() as claiming:
            await store.claim(claim("run-1", "call_1#0"))
        with trace.counting() as completing:
            await store.commit(
                StateChange(
                    completions=[Completion(run_id="run-1", key="call_1#0", outcome={"ok": 1})]
                )
            )
    finally:
        await store.close()

    assert claiming.statements[:2] == [FULL, "BEGIN IMMEDIATE"]
    assert claiming.statements[-2:] == ["COMMIT", NORMAL]
    assert FULL not in completing.statements and NORMAL not in completing.statements


async def test_without_durable_claims_nothing_is_synced_(tmp_path: Path) -> None:
    """What ``bench peers`` compares: every framework at NORMAL."""
    from storage import SQLStorage

    store = SQLStorage(f"sqlite+aiosqlite:///{tmp_path / 'normal.db'}", durable_claims=False)
    _, trace = traced_sqlite_for(store)
    try:
        await store.save_snapshot(snapshot("run-1"))
        with trace.counting() as claiming:
            await store.claim(claim("run-1", "call_1#0"))
    finally:
        await store.close()
    assert FULL not in claiming.statements


def traced_sqlite_for(store: Any) -> tuple[Any, Any]:
    from sqlalchemy import event

    from tests.sqlite_trace import Trace

    trace = Trace()

    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.driver_connection.sqlite3_connection.set_trace_callback(
            lambda sql: trace.statements.append(sql.strip())
        )

    event.listen(store.engine.sync_engine, "connect", on_connect)
    return store, trace


class RecordInput(BaseModel):
    id: str


async def test_the_approval_is_on_disk_before_the_tools_first_line(tmp_path: Path) -> None:
    store, trace = traced_sqlite(f"sqlite+aiosqlite:///{tmp_path / 'approve.db'}")
    seen_by_tool: list[list[str]] = []

    async def delete(input: RecordInput, ctx: ToolContext) -> dict[str, str]:
        seen_by_tool.append(list(trace.statements))
        return {"deleted": input.id}

    tool = create_tool(
        id="delete-record",
        description="Delete a record",
        input_schema=RecordInput,
        execute=delete,
        require_approval=True,
    )
    try:
        asking = Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": "1"})]),
            tools=[tool],
            storage=store,
        )
        first = await asking.generate("delete 1", requested_by="U1")
        deciding = Agent(
            id="ops", model=ScriptedModel([reply("done")]), tools=[tool], storage=store
        )
        done = await deciding.approve_tool_call_generate(run_id=first.run_id, decided_by="U2")
    finally:
        await store.close()

    assert done.finish_reason == "stop"
    [before_tool] = seen_by_tool  # what SQLite had run when the tool's first line ran
    start = len(before_tool) - 1 - before_tool[::-1].index(FULL)
    claim_tx = before_tool[start : before_tool.index(NORMAL, start) + 1]
    assert claim_tx[1] == "BEGIN IMMEDIATE" and claim_tx[-2:] == ["COMMIT", NORMAL]
    assert any(s.startswith("INSERT INTO claims") for s in claim_tx), claim_tx


async def test_a_claims_commit_never_checkpoints_the_log_into_the_database_file(
    tmp_path: Path,
) -> None:
    """The claim costs one sync of the write-ahead log: even with the log past SQLite's
    checkpoint threshold, its commit leaves the database file as it was (a checkpoint would
    copy pages into it and sync it); ordinary writes checkpoint afterwards."""
    import hashlib
    import sqlite3

    from storage import SQLStorage

    path = tmp_path / "checkpoint.db"
    store = SQLStorage(f"sqlite+aiosqlite:///{path}")
    other = sqlite3.connect(path, isolation_level=None)  # another writer on the same file
    try:
        await store.save_snapshot(snapshot("run-1"))
        other.execute("PRAGMA wal_autocheckpoint = 0")
        other.execute("CREATE TABLE filler (blob BLOB)")
        other.execute("BEGIN IMMEDIATE")
        other.executemany("INSERT INTO filler VALUES (?)", ([b"x" * 4000] for _ in range(1200)))
        other.execute("COMMIT")  # the log now holds over 1,000 frames, none checkpointed

        def database_file() -> str:
            return hashlib.sha256(path.read_bytes()).hexdigest()

        before = database_file()
        await store.claim(claim("run-1", "call_1#0"))
        assert database_file() == before

        for n in range(2, 40):  # ordinary writes: one of them checkpoints the log
            await store.save_snapshot(snapshot(f"run-{n}"))
        assert database_file() != before
    finally:
        other.close()
        await store.close()
