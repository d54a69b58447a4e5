"""``serve_agent``: the served agent is built once, from typed parts, and carries the bot's
rules itself, so every surface mounted on it enforces them (the HTTP API without Slack too);
what the agent given brought itself wins."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from slack_sdk.web.async_client import AsyncWebClient

from agents import Agent, DecisionTaken, Observer, PendingToolCall
from agents.memory import Memory
from agents.models import ScriptedModel, call, reply
from bot import Settings, create_services, load_settings
from bot._agent_loader import import_agent
from bot._assembly import serve_agent
from bot._serve import install_api
from bot.api import ApiAccess, add_api_routes
from storage import InMemoryStorage
from tests.bot.harness import Executions, make_agent

TOKEN = "api-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
APPROVE = "/api/agents/ops/approve-tool-call"
GATED = [call("delete_record", {"id": "7"}), reply("Deleted 7.")]


def _settings(**env: str) -> Settings:
    return load_settings(
        {
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": "s",
            "API_TOKEN": TOKEN,
            "API_TOKEN_ACTS_FOR_USERS": "true",  # decidedBy names the person deciding
            **env,
        }
    )


def _client() -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test")  # never called: approvers here are user ids


@asynccontextmanager
async def _api_only(app: web.Application) -> AsyncIterator[TestClient[Any, Any]]:
    async with TestClient(TestServer(app, host="127.0.0.1")) as http:
        yield http


async def test_the_api_alone_refuses_an_approval_by_someone_not_in_approvers() -> None:
    store, executions = InMemoryStorage(), Executions()
    agent, _ = make_agent(GATED, executions)
    served = serve_agent(
        agent, settings=_settings(APPROVERS="U5"), storage=store, client=_client()
    ).agent
    app = web.Application()  # no Slack listeners, no Services: the API and the served agent
    add_api_routes(app, {served.id: served}, ApiAccess.service(TOKEN, acts_for_users=True))
    first = await served.generate("delete 7", requested_by="U1")
    ids = {"runId": first.run_id, "toolCallId": first.pending[0].tool_call_id}
    async with _api_only(app) as http:
        outsider = await http.post(APPROVE, json={**ids, "decidedBy": "U9"}, headers=AUTH)
        assert outsider.status == 403
        assert (await outsider.json())["code"] == "APPROVAL_NOT_ALLOWED"
        assert executions.of("delete_record") == []
        approver = await http.post(APPROVE, json={**ids, "decidedBy": "U5"}, headers=AUTH)
        assert approver.status == 200
        await served.drain()
    assert executions.of("delete_record") == [{"id": "7"}]


async def test_the_bots_api_mounted_without_the_slack_edge_enforces_the_policy_file(
    tmp_path: Any,
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text('[[rules]]\ntools = ["delete-*"]\napprovers = ["U6"]\n', encoding="utf-8")
    settings = _settings(APPROVERS="U5", POLICY_FILE=str(policy))
    store, executions = InMemoryStorage(), Executions()
    agent, _ = make_agent(GATED, executions)
    served = serve_agent(agent, settings=settings, storage=store, client=_client())
    services = create_services(
        agent=served.agent,
        policy=served.policy,
        client=_client(),
        settings=settings,
    )
    app = web.Application()
    install_api(app, services)  # only /api: neither bolt nor /slack/events
    first = await served.agent.generate("delete 7", requested_by="U1")
    ids = {"runId": first.run_id, "toolCallId": first.pending[0].tool_call_id}
    async with _api_only(app) as http:
        default = await http.post(APPROVE, json={**ids, "decidedBy": "U5"}, headers=AUTH)
        assert (await default.json())["code"] == "APPROVAL_NOT_ALLOWED"  # the rule's, not U5
        assert (await http.post(APPROVE, json={**ids, "decidedBy": "U6"}, headers=AUTH)).ok
        await served.agent.drain()
    assert executions.of("delete_record") == [{"id": "7"}]


async def test_an_agent_given_without_storage_or_memory_is_served_on_the_configured_ones() -> None:
    configured = InMemoryStorage()
    given = Agent(id="ops", model=ScriptedModel([]))
    served = serve_agent(given, settings=_settings(), storage=configured, client=_client())
    assert served.agent.storage is configured
    assert isinstance(served.agent.memory, Memory)
    assert served.agent.memory.storage is configured
    assert given.memory is None  # the agent given is left as it was


async def test_an_agent_with_its_own_storage_gets_a_memory_on_that_storage() -> None:
    from tests.bot.served_agents import agent_with_storage, own_store

    configured = InMemoryStorage()
    served = serve_agent(
        agent_with_storage, settings=_settings(), storage=configured, client=_client()
    ).agent
    assert served.storage is own_store
    assert served.memory is not None and served.memory.storage is own_store


async def test_an_agents_own_storage_memory_and_policy_win_over_the_bots() -> None:
    own_store, configured = InMemoryStorage(), InMemoryStorage()
    own_memory = Memory(storage=own_store, last_messages=5)

    def own_policy(call: PendingToolCall, decided_by: str | None, kind: str) -> str | None:
        return None

    given = Agent(
        id="ops",
        model=ScriptedModel([]),
        storage=own_store,
        memory=own_memory,
        decision_policy=own_policy,
        claim_lease_seconds=7,
        default_options={"approval_ttl_seconds": 90},
    )
    settings = _settings(APPROVERS="U5", CLAIM_LEASE_SECONDS="3", APPROVAL_TTL_SECONDS="600")
    served = serve_agent(given, settings=settings, storage=configured, client=_client())
    services = create_services(
        agent=served.agent,
        policy=served.policy,
        client=_client(),
        settings=settings,
    )
    assert served.agent.storage is own_store and services.storage is own_store
    assert served.agent.memory is own_memory
    assert served.agent.decision_policy is own_policy and services.policy.decision is own_policy
    assert served.agent.claim_lease_seconds == 7
    assert served.agent.default_options["approval_ttl_seconds"] == 90


async def test_an_agent_without_rules_is_served_with_the_configured_lease_ttl_and_rules() -> None:
    given = Agent(id="ops", model=ScriptedModel([]), agents={"billing": _billing()})
    settings = _settings(APPROVERS="U5", CLAIM_LEASE_SECONDS="3", APPROVAL_TTL_SECONDS="600")
    served = serve_agent(given, settings=settings, storage=InMemoryStorage(), client=_client())
    assert served.agent.decision_policy is served.policy.decision
    assert served.agent.default_options["approval_ttl_seconds"] == 600
    billing = served.agent.agents["billing"]
    assert billing.decision_policy is served.policy.decision  # sub-agents use the top's
    assert billing.storage is served.agent.storage
    assert billing.claim_lease_seconds == 3


async def test_observers_given_to_the_assembly_hear_the_served_agents_decisions() -> None:
    seen: list[DecisionTaken] = []
    agent, _ = make_agent(GATED, Executions())
    served = serve_agent(
        agent,
        settings=_settings(),
        storage=InMemoryStorage(),
        client=_client(),
        observers=(Observer(on_decision=seen.append),),
    ).agent
    first = await served.generate("delete 7")
    await served.approve_tool_call_generate(run_id=first.run_id, source="api")
    assert [(d.decision, d.source) for d in seen] == [("approved", "api")]


async def test_the_readme_bot_agent_example_starts_without_a_storage_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    given = import_agent("tests.bot.served_agents:gated")  # built without storage
    served = serve_agent(given, settings=_settings(), storage=InMemoryStorage(), client=_client())
    assert (await served.agent.generate("delete 7")).finish_reason == "suspended"
    assert "has no storage" not in caplog.text


def _billing() -> Agent:
    return Agent(id="billing", model=ScriptedModel([]))
