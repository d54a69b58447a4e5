"""SPEC 12 "Extend" over HTTP: ``POST /api/agents/{id}/extend-tool-call`` keeps a pending call
decidable for longer, as whoever may approve it (the token's person), under the policy file's
``max_ttl_seconds``; refusals answer as decisions' do (``answer_of``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from agents import CannotExtend
from agents.models import call, reply
from bot._errors import Answer, answer_of
from bot.api._openapi import openapi_document
from storage import Storage, utcnow
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

PEOPLE = {"ua-token": "UA", "ub-token": "UB"}
EXTEND = "/api/agents/ops/extend-tool-call"
DECLINE = "/api/agents/ops/decline-tool-call"
POLICY = """
[[rules]]
tools = ["delete_record"]
approvers = ["UA"]
ttl_seconds = 3600
max_ttl_seconds = 7200
"""


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_an_approver_extends_over_http_and_anyone_else_is_403(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    (tmp_path / "countersign.toml").write_text(POLICY, encoding="utf-8")
    env = {
        "API_TOKENS": tokens_file(tmp_path, PEOPLE),
        "POLICY_FILE": str(tmp_path / "countersign.toml"),
    }
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        [run] = (await bot.services.agent.list_suspended_runs()).runs
        [shown] = run.tool_calls
        ids = {"runId": run.run_id, "toolCallId": shown.tool_call_id}
        assert shown.expires_at is not None

        refused = await bot.http.post(EXTEND, json=ids, headers=_as("ub-token"))
        assert refused.status == 403
        assert (await refused.json())["code"] == "APPROVAL_NOT_ALLOWED"

        before = utcnow()
        answer = await bot.http.post(EXTEND, json=ids, headers=_as("ua-token"))
        assert answer.status == 200, await answer.text()
        extended = await answer.json()
        until = datetime.fromisoformat(extended["expiresAt"])
        assert until >= before + timedelta(seconds=3600) and until > shown.expires_at
        assert extended["toolCallId"] == shown.tool_call_id
        [event] = [e for e in await store.query_audit(run_id=run.run_id) if e.kind == "extended"]
        assert (event.actor, event.source) == ("UA", "api")
        await bot.settle()
        [card] = bot.cards(ts)
        [redrawn] = bot.updates_of(card.ts)  # the card shows the new expiry, as after a click
        assert f"<!date^{int(until.timestamp())}^" in str(redrawn["blocks"])

        declined = await bot.http.post(DECLINE, json=ids, headers=_as("ua-token"))
        assert declined.status == 200
        await bot.settle()
        late = await bot.http.post(EXTEND, json=ids, headers=_as("ua-token"))
        assert late.status == 409
        assert (await late.json())["code"] == "APPROVAL_ALREADY_DECIDED"


def test_a_rule_allowing_no_more_time_is_409_and_the_route_is_described() -> None:
    refused = CannotExtend("r1", "c1", reason="its rule allows no extension")
    assert answer_of(refused) == Answer(409, "cannot-extend")
    described = openapi_document()["paths"]["/api/agents/{agent_id}/extend-tool-call"]["post"]
    assert set(described["responses"]) >= {"200", "403", "409"}
    body = described["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/ExtendRequest")
