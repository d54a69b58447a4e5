"""A gateway call is a pending call like any other (SPEC 17, agent id ``gateway``): the API lists
and decides it, the Home tab lists it, its rule's quorum applies, ``[gateway] unmatched`` says
what no rule matches, and ``POST /api/gate`` takes only a person's token."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.bot.gateway.harness import (
    ALICE,
    BOB,
    CAROL,
    SERVICE,
    Gateway,
    gateway_bot,
    gateway_env,
)
from tests.bot.harness import SECRET
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_signing import event_request

RULES = """
[[rules]]
tools = ["Bash"]
args_match = { command = "^git push\\\\b" }
approvals = 2

[[rules]]
tools = ["Write"]
args_match = { file_path = "^/notes/" }
grants = { max_seconds = 3600, max_uses = 5 }
"""


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI() as fake:
        yield fake


def _ask(tool: str, args: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args, "session": "s1", "client": "claude-code", **more}


async def _gate(gateway: Gateway, body: dict[str, Any], token: str = ALICE) -> dict[str, Any]:
    answer = await gateway.api("/gate", body, token=token)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


async def test_the_api_lists_and_decides_a_gateway_call_and_the_home_tab_shows_it(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as gateway:
        held = await _gate(gateway, _ask("Write", {"file_path": "/a", "content": "x"}))
        assert held["status"] == "pending" and held["card"]
        async with httpx2.AsyncClient() as http:
            listed = await http.get(
                f"{gateway.url}/api/agents/gateway/suspended-runs",
                headers={"Authorization": f"Bearer {BOB}"},
            )
        [run] = listed.json()["runs"]
        [call] = run["toolCalls"]
        assert (call["toolName"], call["requestedBy"]) == ("Write", "U0ALICE")
        home = await _open_home(gateway, "U0BOB")
        assert "Write" in str(home["blocks"])  # waiting for bob, on his Home tab
        body = {"runId": held["runId"], "toolCallId": held["callId"]}
        own = await gateway.api("/agents/gateway/approve-tool-call", body, token=ALICE)
        assert own.status_code == 403  # the requester may not approve their own call
        taken = await gateway.api("/agents/gateway/approve-tool-call", body, token=BOB)
        assert taken.status_code == 200, taken.text
        await gateway.settle()
        approved = await _gate(gateway, _ask("Write", {"file_path": "/a", "content": "x"}))
        assert (approved["status"], approved["decidedBy"]) == ("approved", "U0BOB")
        [card] = gateway.cards()
        assert "Approved" in gateway.card(card.ts).text  # the card says so too


async def test_a_standing_grant_approves_the_persons_later_calls_it_pins(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    first = _ask("Write", {"file_path": "/notes/a.md", "content": "one"})
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as gateway:
        held = await _gate(gateway, first)
        grant = {"seconds": 600, "maxUses": 2, "within": "resource", "freeArgs": ["content"]}
        body = {"runId": held["runId"], "toolCallId": held["callId"], "grant": grant}
        taken = await gateway.api("/agents/gateway/approve-tool-call", body, token=BOB)
        assert taken.status_code == 200, taken.text
        await gateway.settle()
        assert (await _gate(gateway, first))["status"] == "approved"
        later = await _gate(gateway, _ask("Write", {"file_path": "/notes/a.md", "content": "2"}))
        assert (later["status"], later["decidedBy"]) == ("approved", "U0BOB")  # the grant
        other = await _gate(gateway, _ask("Write", {"file_path": "/notes/b.md", "content": "2"}))
        assert other["status"] == "pending"  # a pinned argument differs: asked anew
        await gateway.settle()
        lines = [m.text for m in gateway.slack.messages.values() if not m.metadata]
    assert any("grant" in line.lower() for line in lines)  # the compact line, in the channel
    assert len(gateway.cards()) == 2


async def test_a_rules_quorum_applies_to_a_hook_call(slack: FakeSlackAPI, tmp_path: Path) -> None:
    push = _ask("Bash", {"command": "git push origin main"})
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as gateway:
        assert (await _gate(gateway, push))["status"] == "pending"
        card = await gateway.next_card()
        assert "0 of 2 approvals" in str(card.blocks)
        await gateway.click(card, "approval:approve", user="U0BOB")
        assert (await _gate(gateway, push))["status"] == "pending"  # one of two
        await gateway.click(gateway.card(card.ts), "approval:approve", user="U0CAROL")
        assert (await _gate(gateway, push))["status"] == "approved"


async def test_gateway_unmatched_allow_lets_what_no_rule_matches_run(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    policy = RULES + '\n[gateway]\nunmatched = "allow"\n'
    async with gateway_bot(slack, gateway_env(slack, tmp_path, policy)) as gateway:
        assert (await _gate(gateway, _ask("Bash", {"command": "rm -rf x"})))["status"] == "allowed"
        push = await _gate(gateway, _ask("Bash", {"command": "git push"}))
        assert push["status"] == "pending"  # a rule still holds what it matches
    assert len(gateway.cards()) == 1


async def test_only_a_persons_token_may_ask_the_gate(slack: FakeSlackAPI, tmp_path: Path) -> None:
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as gateway:
        service = await gateway.api("/gate", _ask("Bash", {"command": "ls"}), token=SERVICE)
        assert service.status_code == 403
        assert service.json()["code"] == "PERSON_TOKEN_REQUIRED"
        nobody = await gateway.api("/gate", _ask("Bash", {"command": "ls"}), token="nope")
        assert nobody.status_code == 401
        bad = await gateway.api("/gate", {"tool": "a b", "args": {}}, token=CAROL)
        assert bad.status_code == 400
    assert gateway.cards() == []


async def test_without_the_gateway_the_gate_says_how_to_turn_it_on(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = gateway_env(slack, tmp_path, RULES, GATEWAY="false")
    async with gateway_bot(slack, env) as gateway:
        off = await gateway.api("/gate", _ask("Bash", {"command": "ls"}), token=ALICE)
        async with httpx2.AsyncClient() as http:
            mcp = await http.post(f"{gateway.url}/mcp", json={})
    assert off.status_code == 404 and "GATEWAY=true" in off.json()["message"]
    assert mcp.status_code == 404


async def _open_home(gateway: Gateway, user: str) -> dict[str, Any]:
    envelope = {
        "token": "legacy",
        "team_id": "T1",
        "api_app_id": "A1",
        "type": "event_callback",
        "event_id": f"Ev{time.monotonic_ns()}",
        "event_time": int(time.time()),
        "event": {"type": "app_home_opened", "user": user, "tab": "home", "event_ts": "1.0"},
    }
    body, headers = event_request(envelope, SECRET)
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"{gateway.url}/slack/events", content=body, headers=headers)
    assert answer.status_code == 200
    await gateway.settle()
    await asyncio.sleep(0)
    return gateway.slack.homes[user]


async def test_the_gateway_agent_is_served_on_the_bots_storage_runner_and_rules(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    async with gateway_bot(slack, gateway_env(slack, tmp_path, RULES)) as gateway:
        services = gateway.services
        agent = services.agent.get("gateway")
        assert agent is not None and agent is not services.agent.main
        assert agent.storage is services.storage
        assert agent.runner is services.runner  # drained with the bot's work at shutdown
        assert agent.decision_policy is services.policy.decision
