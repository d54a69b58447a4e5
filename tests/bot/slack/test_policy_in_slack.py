"""SPEC 11 in Slack: approvers per rule, quorum (two users, the tool runs once), TTL per rule,
a rule that adds approval, the fail-safe rule, confirm, the API with the service token and with
per-person tokens."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from agents.models import call, reply
from bot.slack._ids import APPROVE_ACTION
from storage import Storage
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI, PostedMessage

TOKEN = "api-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _policy(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "countersign.toml"
    path.write_text(text, encoding="utf-8")
    return {"POLICY_FILE": str(path), "API_TOKEN": TOKEN}


async def _card(bot: Bot, text: str = "delete record 7") -> tuple[str, PostedMessage]:
    ts = await bot.mention(text, user="U1")
    await bot.settle()
    [card] = bot.cards(ts)
    return ts, card


async def test_two_users_approve_a_quorum_call_and_it_runs_once(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    env = _policy(tmp_path, '[[rules]]\ntools = ["delete-*"]\napprovals = 2\n')
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        ts, card = await _card(bot)
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.approvals_required == 2
        await bot.click(card, APPROVE_ACTION, user="U2")
        await bot.settle()
        assert executions.of("delete_record") == []
        await bot.click(card, APPROVE_ACTION, user="U2")  # the same person again
        await bot.settle()
        assert executions.of("delete_record") == []
        await bot.click(card, APPROVE_ACTION, user="U3")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]
        assert bot.texts(ts)[-1] == "Deleted 7."
        recorded = [e for e in await store.query_audit() if e.kind == "approval-recorded"]
        assert [e.actor for e in recorded] == ["U2", "U3"]  # each approval audited


async def test_only_the_rules_approvers_may_approve_its_calls(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    text = (
        '[defaults]\napprovers = ["U2"]\n\n'
        '[[rules]]\ntools = ["delete_record"]\napprovers = ["S1"]\n'
    )
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, text)) as bot:
        slack.usergroups["S1"] = ["U6"]
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U2")  # a default approver, not the rule's
        await bot.settle()
        assert executions.of("delete_record") == []
        [ephemeral] = slack.calls_to("chat.postEphemeral")
        assert ephemeral["user"] == "U2"
        [refused] = [e for e in await store.query_audit() if e.kind == "refused"]
        assert refused.data["rule"] == "not-approver"
        await bot.click(card, APPROVE_ACTION, user="U6")
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]


@pytest.mark.parametrize(
    "event",
    [
        {"type": "subteam_members_changed", "subteam_id": "S1", "added_users": ["U7"]},
        {"type": "subteam_updated", "subteam": {"id": "S1", "users": ["U7"]}},
    ],
)
async def test_a_user_group_change_reaches_the_next_decision_at_once(
    slack: FakeSlackAPI,
    store: Storage,
    executions: Executions,
    tmp_path: Path,
    event: dict[str, object],
) -> None:
    text = '[[rules]]\ntools = ["delete_record"]\napprovers = ["S1"]\n'
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, text)) as bot:
        slack.usergroups["S1"] = ["U6"]
        _, card = await _card(bot)
        await bot.click(card, APPROVE_ACTION, user="U7")  # not in S1 (yet)
        await bot.settle()
        assert executions.of("delete_record") == []
        slack.usergroups["S1"] = ["U6", "U7"]
        assert (await bot.send_event(event)).status == 200
        await bot.click(card, APPROVE_ACTION, user="U7")  # well within the 30 s cache
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]


async def test_a_rule_adds_approval_and_its_ttl_to_a_tool_without_one_and_asks_to_confirm(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    text = (
        '[[rules]]\ntools = ["open-ticket"]\nrequire_approval = true\nttl_seconds = 120\n'
        "confirm = true\n"
    )
    agent, _ = make_agent([call("open_ticket", {"title": "printer"}), reply("Opened.")], executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, text)) as bot:
        await _card(bot, "open a ticket")
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.requires_approval and executions.calls == []
        assert pending.expires_at is not None
        ttl = pending.expires_at - pending.suspended_at
        assert abs(ttl - timedelta(seconds=120)) < timedelta(seconds=5)
        assert bot.services.policy.confirms(pending) is True


async def test_a_rule_saying_no_approval_never_removes_a_tools_own(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    text = '[[rules]]\ntools = ["*"]\nrequire_approval = false\n'
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=_policy(tmp_path, text)) as bot:
        await _card(bot)
        [pending] = (await bot.agent.list_suspended_runs()).runs[0].tool_calls
        assert pending.requires_approval and executions.calls == []
        assert bot.services.policy.confirms(pending) is False


async def test_the_api_refuses_a_restricted_call_to_the_service_token_and_takes_it_from_people(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    text = '[[rules]]\ntools = ["delete-*"]\napprovals = 2\napprovers = ["U2", "U3"]\n'
    people = {"u2-token": "U2", "u3-token": "U3", "u9-token": "U9"}
    env = {**_policy(tmp_path, text), "API_TOKENS": tokens_file(tmp_path, people)}
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        await _card(bot)
        page = await bot.agent.list_suspended_runs()
        ids = {"runId": page.runs[0].run_id, "toolCallId": page.runs[0].tool_calls[0].tool_call_id}
        url = "/api/agents/ops/approve-tool-call"
        for body in (ids, {**ids, "decidedBy": "U2"}):  # the service token is no person
            anonymous = await bot.http.post(url, json=body, headers=AUTH)
            assert anonymous.status == 403
            assert _refusal(await anonymous.json()) == ("APPROVAL_NOT_ALLOWED", "needs-person")
        declined = await bot.http.post("/api/agents/ops/decline-tool-call", json=ids, headers=AUTH)
        assert declined.status == 403
        outsider = await bot.http.post(url, json=ids, headers=_bearer("u9-token"))
        assert _refusal(await outsider.json()) == ("APPROVAL_NOT_ALLOWED", "not-approver")
        for token in ("u2-token", "u3-token"):
            response = await bot.http.post(url, json=ids, headers=_bearer(token))
            assert response.status == 200, await response.text()
            await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _refusal(body: dict[str, str]) -> tuple[str, str]:
    return body["code"], body["rule"]


def _approve_button(card: PostedMessage) -> dict[str, object]:
    actions = next(b for b in card.blocks if b["type"] == "actions")
    return next(e for e in actions["elements"] if e["action_id"] == APPROVE_ACTION)


async def test_the_card_asks_for_confirmation_only_where_the_policy_says_so(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    env = _policy(tmp_path, '[[rules]]\ntools = ["delete_record"]\nconfirm = true\n')
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("ok")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        _, card = await _card(bot)
        confirm = _approve_button(card).get("confirm")
        assert isinstance(confirm, dict) and confirm["confirm"]["text"]
    env = _policy(tmp_path, '[[rules]]\ntools = ["other_tool"]\nconfirm = true\n')
    agent, _ = make_agent([call("delete_record", {"id": "8"}), reply("ok")], executions)
    async with start_bot(slack, agent, store, env=env) as bot:
        _, card = await _card(bot, "delete record 8")
        assert "confirm" not in _approve_button(card)
