"""The offline demo model and the built-in ops agent it drives (SPEC 10)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import bot.demo._text as text
from agents import Agent, ServedParts
from agents.memory import Memory
from agents.models import (
    Model,
    ModelRequest,
    ObjectOutput,
    OpenAIModel,
    TextDelta,
    ToolCallRequest,
)
from agents.models._base import ModelEvent
from bot import load_settings
from bot.demo._model import DemoModel, extract, route, route_many
from bot.demo._ops_agent import agent_model, openai_client, ops_agent
from storage import InMemoryStorage
from tests.fakes.openai_server import FakeOpenAIServer
from tools._demo_db import records
from tools.examples import SEEDED_RECORDS, DemoDB, demo_database_url

OPS_TOOLS = {"list-records", "get-record", "delete-record", "open-ticket", "agent-billing"}


@pytest.mark.parametrize(
    ("message", "tools", "expected"),
    [
        ("delete record 42", OPS_TOOLS, ("delete-record", {"id": 42})),
        ("please remove record #5 now", OPS_TOOLS, ("delete-record", {"id": 5})),
        ("show record 3", OPS_TOOLS, ("get-record", {"id": 3})),
        ("list records", OPS_TOOLS, ("list-records", {})),
        (
            "refund order 7 for 250",
            OPS_TOOLS,
            ("agent-billing", {"prompt": "refund order 7 for 250"}),
        ),
        ("refund order 7 for 250", {"refund"}, ("refund", {"order": 7, "amount": 250})),
        ("refund order 7 for $12.5", {"refund"}, ("refund", {"order": 7, "amount": 12.5})),
        ("open a ticket about the printer", OPS_TOOLS, ("open-ticket", {"title": "printer"})),
        (
            "open a high priority ticket about the VPN.",
            OPS_TOOLS,
            ("open-ticket", {"title": "VPN", "priority": "high"}),
        ),
        ("what's the weather?", OPS_TOOLS, None),
        ("delete record 42", {"refund"}, None),
    ],
)
def test_plain_requests_map_to_the_offered_tools(
    message: str, tools: set[str], expected: tuple[str, dict[str, object]] | None
) -> None:
    assert route(message, tools) == expected


def _schema(enum: list[str]) -> dict[str, object]:
    resume = {
        "type": "object",
        "properties": {"priority": {"enum": enum, "type": "string"}},
        "required": ["priority"],
    }
    return {
        "type": "object",
        "properties": {
            "answered": {"type": "boolean"},
            "resume_data": {"anyOf": [resume, {"type": "null"}]},
        },
        "required": ["answered", "resume_data"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("high please", {"answered": True, "resume_data": {"priority": "high"}}),
        ("Make it LOW.", {"answered": True, "resume_data": {"priority": "low"}}),
        ("it's urgent", {"answered": True, "resume_data": {"priority": "high"}}),
        ("normal", {"answered": True, "resume_data": {"priority": "medium"}}),
        ("list records", {"answered": False, "resume_data": None}),
    ],
)
def test_the_auto_resume_request_is_answered_from_the_reply(
    reply: str, expected: dict[str, object]
) -> None:
    assert extract(_schema(["low", "medium", "high"]), reply) == expected


async def _events(model: Model, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(request)]


async def test_it_is_a_model_that_answers_text_calls_and_objects() -> None:
    from agents._messages import Message, ToolSpec

    model = DemoModel()
    assert isinstance(model, Model) and model.model_id == "demo"
    spec = ToolSpec(name="delete-record", description="", parameters={})
    events = await _events(
        model,
        ModelRequest(messages=[Message(role="user", content="delete record 9")], tools=[spec]),
    )
    [call] = [e for e in events if isinstance(e, ToolCallRequest)]
    assert (call.name, call.args) == ("delete-record", {"id": 9})
    helped = await _events(model, ModelRequest(messages=[Message(role="user", content="hi")]))
    assert "".join(e.text for e in helped if isinstance(e, TextDelta)) == text.HELP
    request = ModelRequest(
        messages=[Message(role="user", content="Paused tool call: {}\n\nUser message: low")],
        response_schema=_schema(["low", "high"]),
    )
    [answer] = [e for e in await _events(model, request) if isinstance(e, ObjectOutput)]
    assert answer.value == {"answered": True, "resume_data": {"priority": "low"}}


def test_the_demo_tables_follow_sql_storage_else_live_in_process() -> None:
    assert demo_database_url("sqlite+aiosqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    assert demo_database_url("postgresql+asyncpg://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert demo_database_url(None) == "sqlite+aiosqlite:///./data/countersign.db"
    assert demo_database_url("memory://") is None
    assert demo_database_url("redis://127.0.0.1:6379/0") is None


async def test_openai_is_used_when_a_key_is_set() -> None:
    settings = load_settings({"OPENAI_API_KEY": "sk-1", "OPENAI_MODEL": "m"})
    async with openai_client(settings) as client:
        model = agent_model(settings, client)
        assert isinstance(model, OpenAIModel) and model.model_id == "openai/m"
    assert isinstance(agent_model(load_settings({})), DemoModel)
    assert openai_client(load_settings({})) is None


async def test_the_built_in_agent_talks_to_the_openai_server_and_key_of_its_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    async with FakeOpenAIServer() as server:
        server.reply("Hello from the configured server.")
        settings = load_settings(
            {
                "OPENAI_API_KEY": "sk-from-settings",
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_MODEL": "gpt-configured",
            }
        )
        db = DemoDB()
        client = openai_client(settings)
        assert client is not None
        try:
            agent = ops_agent(settings, db, InMemoryStorage(), client=client)
            result = await agent.generate("hi", thread_id="t", resource_id="r")
        finally:
            await client.close()
            await db.close()
        assert result.text == "Hello from the configured server."
        [request] = server.requests
        assert request.headers["authorization"] == "Bearer sk-from-settings"
        assert request.body["model"] == "gpt-configured"


@pytest.fixture
async def ops() -> AsyncIterator[tuple[Agent, DemoDB]]:
    db = DemoDB()
    store = InMemoryStorage()
    given = ops_agent(load_settings({}), db)
    agent = given.served(ServedParts(storage=store, memory=Memory(storage=store)))
    yield agent, db
    await db.close()


async def test_the_ops_agent_deletes_a_record_after_approval(ops: tuple[Agent, DemoDB]) -> None:
    agent, db = ops
    first = await agent.generate("delete record 42", thread_id="t1", resource_id="r")
    assert first.finish_reason == "suspended"
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.text == "Done: record 42 (Acme Corp #42) was deleted."
    assert await db.count(records) == SEEDED_RECORDS - 1


async def test_a_refund_goes_through_billing_and_waits_for_approval(
    ops: tuple[Agent, DemoDB],
) -> None:
    agent, _ = ops
    first = await agent.generate("refund order 7 for 250", thread_id="t2", resource_id="r")
    pending = first.suspend_payload
    assert pending is not None
    assert (pending.tool_name, pending.args, pending.agent_path) == (
        "refund",
        {"order": 7, "amount": 250},
        ["ops", "billing"],
    )
    done = await agent.approve_tool_call_generate(run_id=first.run_id)
    assert done.text.startswith("Refunded 250.00 on order 7")
    small = await agent.generate("refund order 8 for 20", thread_id="t3", resource_id="r")
    assert small.finish_reason == "stop" and small.text.startswith("Refunded 20.00 on order 8")


async def test_a_ticket_asks_for_its_priority_and_a_reply_answers(
    ops: tuple[Agent, DemoDB],
) -> None:
    agent, _ = ops
    first = await agent.generate("open a ticket about the printer", thread_id="t4", resource_id="r")
    assert first.finish_reason == "suspended"
    assert first.suspend_payload is not None and first.suspend_payload.suspend_payload
    stream = await agent.stream("high", thread_id="t4", resource_id="r")
    result = await stream.result()
    assert result.text == "Opened ticket #1 “printer” with high priority."


async def test_a_declined_delete_is_reported_and_keeps_the_record(
    ops: tuple[Agent, DemoDB],
) -> None:
    agent, db = ops
    first = await agent.generate("delete record 3", thread_id="t5", resource_id="r")
    done = await agent.decline_tool_call_generate(run_id=first.run_id, reason="still needed")
    assert done.text == "OK, I did not run delete-record: it was declined (still needed)."
    assert await db.count(records) == SEEDED_RECORDS


@pytest.mark.parametrize(
    "message",
    ["delete records 3, 4 and 5", "please remove records #3, 4, and 5", "delete records 3 & 4 & 5"],
)
async def test_deleting_several_records_is_one_step_of_several_calls(message: str) -> None:
    from agents._messages import Message, ToolSpec

    tools = [ToolSpec(name=n, description=n, parameters={}) for n in sorted(OPS_TOOLS)]
    events = DemoModel().answer(
        ModelRequest(messages=[Message(role="user", content=message)], tools=tools)
    )

    calls = [e for e in events if isinstance(e, ToolCallRequest)]
    assert [(c.name, c.args) for c in calls] == [("delete-record", {"id": n}) for n in (3, 4, 5)]
    assert len({c.id for c in calls}) == 3
    assert route_many("delete record 3", OPS_TOOLS) == []
    assert route_many(message, {"get-record"}) == []
