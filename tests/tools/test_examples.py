"""The built-in example tools on the demo tables (SPEC 10), driven through a real Agent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agents import Agent
from agents.models import ScriptedModel, call, reply
from storage import InMemoryStorage, create_storage
from tests.backends import BACKENDS, unique_url
from tools import ApprovalContext, DemoDB, record_tools, refund_tools, ticket_tools
from tools._demo_db import records
from tools.examples import SEEDED_RECORDS, RefundInput, demo_database_url


@pytest.fixture
async def db() -> AsyncIterator[DemoDB]:
    demo = DemoDB()
    yield demo
    await demo.close()


def _agent(db: DemoDB, *script: Any) -> Agent:
    return Agent(
        id="ops",
        model=ScriptedModel(list(script)),
        tools=[*record_tools(db), *refund_tools(db), *ticket_tools(db)],
        storage=InMemoryStorage(),
    )


async def test_a_fresh_demo_database_is_seeded_with_records_1_to_50(db: DemoDB) -> None:
    agent = _agent(db, call("list-records", {"limit": 3}), reply("ok"))
    result = await agent.generate("list records")
    [listed] = result.tool_results
    assert [r["id"] for r in listed["result"]["records"]] == [1, 2, 3]
    assert listed["result"]["total"] == SEEDED_RECORDS


async def test_delete_waits_for_approval_then_the_record_is_gone(db: DemoDB) -> None:
    agent = _agent(
        db,
        call("delete-record", {"id": 42}),
        reply("Deleted."),
        call("get-record", {"id": 42}),
        reply("gone"),
    )
    first = await agent.generate("delete record 42")
    assert first.finish_reason == "suspended"
    assert first.suspend_payload is not None and first.suspend_payload.requires_approval
    assert await db.count(records) == SEEDED_RECORDS
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.tool_results[0]["result"]["deleted"] is True
    assert await db.count(records) == SEEDED_RECORDS - 1
    check = await agent.generate("show record 42")
    assert check.tool_results[0]["result"] == {"found": False, "id": 42}


async def test_a_declined_delete_keeps_the_record(db: DemoDB) -> None:
    agent = _agent(db, call("delete-record", {"id": 7}), reply("Kept."))
    first = await agent.generate("delete record 7")
    await agent.decline_tool_call_generate(run_id=first.run_id, reason="no")
    assert await db.count(records) == SEEDED_RECORDS


@pytest.mark.parametrize(("amount", "gated"), [(100, False), (100.01, True), (250, True)])
async def test_refunds_over_100_need_approval_by_predicate(
    db: DemoDB, amount: float, gated: bool
) -> None:
    agent = _agent(db, call("refund", {"order": 7, "amount": amount}), reply("ok"))
    result = await agent.generate("refund")
    assert (result.finish_reason == "suspended") is gated
    if not gated:
        assert result.tool_results[0]["result"]["refunded"] is True


def test_the_refund_predicate_treats_an_unreadable_amount_as_needing_approval() -> None:
    [tool] = refund_tools(DemoDB())
    assert callable(tool.require_approval)
    with pytest.raises(ValueError):
        tool.require_approval(ApprovalContext(tool_name="refund", args={"amount": "lots"}))
    assert RefundInput.model_json_schema()["required"] == ["order", "amount"]


async def test_a_refund_cannot_exceed_what_is_left_of_the_order(db: DemoDB) -> None:
    for _ in range(2):
        agent = _agent(db, call("refund", {"order": 1, "amount": 100}), reply("ok"))
        result = await agent.generate("refund")
    assert result.tool_results[0]["result"]["refunded"] is True
    agent = _agent(db, call("refund", {"order": 1, "amount": 50}), reply("ok"))
    result = await agent.generate("refund")
    assert result.tool_results[0]["result"]["refunded"] is False  # order 1 totals 220


async def test_open_ticket_suspends_for_a_missing_priority_then_opens_it(db: DemoDB) -> None:
    agent = _agent(db, call("open-ticket", {"title": "printer"}), reply("Opened."))
    first = await agent.generate("open a ticket about the printer")
    assert first.finish_reason == "suspended"
    pending = first.suspend_payload
    assert pending is not None and not pending.requires_approval
    assert "priority" in str(pending.suspend_payload)
    assert pending.resume_schema is not None
    assert pending.resume_schema["properties"]["priority"]["enum"] == ["low", "medium", "high"]
    done = await agent.resume_generate({"priority": "high"}, run_id=first.run_id)
    assert done.tool_results[0]["result"] == {"ticket": 1, "title": "printer", "priority": "high"}


async def test_a_ticket_with_a_priority_opens_at_once(db: DemoDB) -> None:
    agent = _agent(db, call("open-ticket", {"title": "vpn", "priority": "low"}), reply("ok"))
    result = await agent.generate("open a low priority ticket about the vpn")
    assert result.finish_reason == "stop"
    assert result.tool_results[0]["result"]["priority"] == "low"


async def test_the_demo_tables_live_in_the_storage_sqlite_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    store = create_storage(url)
    first = DemoDB(url)
    agent = Agent(
        id="ops",
        model=ScriptedModel([call("delete-record", {"id": 3}), reply("ok")]),
        tools=record_tools(first),
        storage=store,
    )
    result = await agent.generate("delete record 3")
    await agent.approve_tool_call_generate(run_id=result.run_id)
    await first.close()
    again = DemoDB(url)  # a restart: the tables are found, not re-seeded
    assert await again.count(records) == SEEDED_RECORDS - 1
    await again.close()
    await store.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_demo_tables_follow_every_storage_backend(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        first = DemoDB(demo_database_url(url))
        agent = Agent(
            id="ops",
            model=ScriptedModel([call("delete-record", {"id": 3}), reply("ok")]),
            tools=record_tools(first),
            storage=InMemoryStorage(),
        )
        result = await agent.generate("delete record 3")
        await agent.approve_tool_call_generate(run_id=result.run_id)
        assert await first.count(records) == SEEDED_RECORDS - 1
        await first.close()
        again = DemoDB(demo_database_url(url))
        in_process = demo_database_url(url) is None  # memory:// and redis:// storage
        kept = SEEDED_RECORDS if in_process else SEEDED_RECORDS - 1
        assert await again.count(records) == kept
        await again.close()
