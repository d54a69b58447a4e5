"""SPEC 7: who decides through the API is authenticated by the token, never asserted.

A per-person token (``API_TOKENS``) decides as its user; the service token (``API_TOKEN``)
decides as no person, so it never counts toward a quorum nor satisfies an approver-restricted
rule, unless ``API_TOKEN_ACTS_FOR_USERS=true``. Checked inside the claim by the served agent's
decision policy, so nothing is recorded when it refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.models import call, reply
from storage import Storage
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

SERVICE = "service-token"
PEOPLE = {"ua-token": "UA", "ub-token": "UB"}
APPROVE = "/api/agents/ops/approve-tool-call"
QUORUM = '[[rules]]\ntools = ["delete_record"]\napprovals = 2\n'


def _env(tmp_path: Path, policy: str | None = QUORUM, **extra: str) -> dict[str, str]:
    env = {"API_TOKEN": SERVICE, "API_TOKENS": tokens_file(tmp_path, PEOPLE), **extra}
    if policy is not None:
        (tmp_path / "countersign.toml").write_text(policy, encoding="utf-8")
        env["POLICY_FILE"] = str(tmp_path / "countersign.toml")
    return env


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _pending(bot: Bot) -> dict[str, str]:
    await bot.mention("delete record 7", user="U1")
    await bot.settle()
    [run] = (await bot.services.agent.list_suspended_runs()).runs
    return {"runId": run.run_id, "toolCallId": run.tool_calls[0].tool_call_id}


async def _approve(bot: Bot, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await bot.http.post(APPROVE, json=body, headers=_as(token))
    answer = await response.json()
    await bot.settle()
    return response.status, answer


async def test_one_service_token_naming_two_people_cannot_complete_a_quorum(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_env(tmp_path)) as bot:
        ids = await _pending(bot)
        for person in ("UA", "UB"):  # the attack: one token, two asserted names
            status, answer = await _approve(bot, SERVICE, {**ids, "decidedBy": person})
            assert status == 403, answer
            assert (answer["code"], answer["rule"]) == ("APPROVAL_NOT_ALLOWED", "needs-person")
        assert executions.of("delete_record") == []
        audit = await store.query_audit()
        assert [e for e in audit if e.kind == "approval-recorded"] == []


async def test_two_per_person_tokens_complete_a_quorum_and_the_tool_runs_once(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_env(tmp_path)) as bot:
        ids = await _pending(bot)
        assert (await _approve(bot, "ua-token", ids))[0] == 200
        status, answer = await _approve(bot, "ua-token", {**ids, "decidedBy": "UA"})  # again
        assert (status, answer["code"]) == (409, "APPROVAL_DUPLICATE_APPROVER")
        assert executions.of("delete_record") == []
        assert (await _approve(bot, "ub-token", ids))[0] == 200
        assert executions.of("delete_record") == [{"id": "7"}]
        audit = await store.query_audit()
        assert [e.actor for e in audit if e.kind == "approval-recorded"] == ["UA", "UB"]


async def test_a_per_person_token_naming_someone_else_is_403_and_records_nothing(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_env(tmp_path, policy=None)) as bot:
        ids = await _pending(bot)
        status, answer = await _approve(bot, "ua-token", {**ids, "decidedBy": "UB"})
        assert status == 403
        assert (answer["code"], answer["rule"]) == ("APPROVAL_NOT_ALLOWED", "other-person")
        assert executions.of("delete_record") == []
        assert (await bot.services.agent.list_suspended_runs()).total == 1


async def test_the_service_tokens_decision_records_no_person_even_when_it_names_one(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_env(tmp_path, policy=None)) as bot:
        ids = await _pending(bot)
        assert (await _approve(bot, SERVICE, {**ids, "decidedBy": "UA"}))[0] == 200
        assert executions.of("delete_record") == [{"id": "7"}]
        [decided] = [e for e in await store.query_audit() if e.kind == "decided"]
        assert (decided.source, decided.actor) == ("api", None)


async def test_a_service_acting_for_its_users_decides_as_decided_by_and_needs_two_people(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    env = _env(tmp_path, API_TOKEN_ACTS_FOR_USERS="true")
    async with start_bot(slack, agent, store, env=env) as bot:
        ids = await _pending(bot)
        assert (await _approve(bot, SERVICE, {**ids, "decidedBy": "UA"}))[0] == 200
        status, _ = await _approve(bot, "ua-token", ids)  # the same person, another way in
        assert status == 409
        assert executions.of("delete_record") == []
        assert (await _approve(bot, SERVICE, {**ids, "decidedBy": "UB"}))[0] == 200
        assert executions.of("delete_record") == [{"id": "7"}]


async def test_per_person_tokens_alone_turn_the_api_on_and_unknown_tokens_are_401(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    agent, _ = make_agent([], executions)
    env = {"API_TOKENS": tokens_file(tmp_path, PEOPLE)}
    async with start_bot(slack, agent, store, env=env) as bot:
        listing = "/api/agents/ops/suspended-runs"
        assert (await bot.http.get(listing, headers=_as("ub-token"))).status == 200
        for wrong in (SERVICE, "ua-tokenx", "UA"):
            assert (await bot.http.get(listing, headers=_as(wrong))).status == 401
    async with start_bot(slack, agent, store) as bot:  # neither API_TOKEN nor API_TOKENS
        assert (await bot.http.get(listing, headers=_as("ub-token"))).status == 404
