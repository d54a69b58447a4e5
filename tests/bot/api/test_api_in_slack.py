"""A decision taken through the HTTP API shows in Slack like a click: card updated, answer."""

from __future__ import annotations

from pathlib import Path

from agents.models import call, reply
from storage import Storage
from tests.bot.api.fixtures import tokens_file
from tests.bot.harness import Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

TOKEN = "api-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def _pending(bot: Bot) -> tuple[str, str]:
    response = await bot.http.get("/api/agents/ops/suspended-runs", headers=AUTH)
    body = await response.json()
    run = body["runs"][0]
    return run["runId"], run["toolCalls"][0]["toolCallId"]


async def test_an_api_approval_updates_the_card_and_posts_the_answer_in_the_thread(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    env = {"API_TOKEN": TOKEN, "API_TOKEN_ACTS_FOR_USERS": "true"}  # a service signing users in
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        assert len(bot.cards(ts)) == 1
        run_id, call_id = await _pending(bot)
        response = await bot.http.post(
            "/api/agents/ops/approve-tool-call",
            json={"runId": run_id, "toolCallId": call_id, "decidedBy": "alice"},
            headers=AUTH,
        )
        assert response.status == 200, await response.text()
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "7"}]
        [updated] = bot.cards(ts)
        assert not any(b["type"] == "actions" for b in updated.blocks)
        assert "Approved by alice" in str(updated.blocks)
        assert bot.texts(ts)[-1] == "Deleted 7."


async def test_an_api_decline_updates_the_card_with_the_reason(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Kept 7.")], executions)
    async with start_bot(slack, agent, store, env={"API_TOKEN": TOKEN}) as bot:
        ts = await bot.mention("delete record 7", user="U1")
        await bot.settle()
        run_id, call_id = await _pending(bot)
        response = await bot.http.post(
            "/api/agents/ops/decline-tool-call",
            json={"runId": run_id, "toolCallId": call_id, "reason": "wrong one"},
            headers=AUTH,
        )
        assert response.status == 200, await response.text()
        await bot.settle()
        assert executions.calls == []
        [updated] = bot.cards(ts)
        assert "Declined by api" in str(updated.blocks) and "wrong one" in str(updated.blocks)
        assert bot.texts(ts)[-1] == "Kept 7."


async def test_an_api_resume_answers_the_question_and_posts_the_answer_in_the_thread(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    ask = call("open_ticket", {"title": "Printer on fire"})
    agent, _ = make_agent([ask, reply("Opened T-1.")], executions)
    env = {"API_TOKEN": TOKEN, "API_TOKENS": tokens_file(tmp_path, {"u3-token": "U3"})}
    async with start_bot(slack, agent, store, env=env) as bot:
        ts = await bot.mention("open a ticket: printer on fire", user="U1")
        await bot.settle()
        [question] = bot.slack.thread("C1", ts)
        run_id, call_id = await _pending(bot)
        response = await bot.http.post(
            "/api/agents/ops/resume",
            json={
                "runId": run_id,
                "toolCallId": call_id,
                "resumeData": {"priority": "high"},
            },
            headers={"Authorization": "Bearer u3-token"},  # U3's own token: U3 answers
        )
        assert response.status == 200, await response.text()
        await bot.settle()
        assert executions.of("open_ticket") == [{"title": "Printer on fire", "priority": "high"}]
        answered = bot.slack.messages[question.ts]
        assert not any(b["type"] == "actions" for b in answered.blocks)
        assert "Details provided by <@U3>" in str(answered.blocks)
        assert bot.texts(ts)[-1] == "Opened T-1."
