"""``GET /metrics`` (SPEC 13): Prometheus text, counted from real Slack traffic, nothing secret."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from agents import Approve, Decline, GrantRequest
from agents.models import call, reply
from bot import APPROVE_ACTION
from bot.background import sweep
from storage import Storage
from tests.bot.conftest import BotFactory
from tests.bot.harness import SECRET, Bot, Executions, make_agent, start_bot
from tests.fakes.slack_api import FakeSlackAPI

GATED = [call("delete_record", {"id": "abc-123"}), reply("Deleted abc-123.")]


Key = tuple[str, tuple[tuple[str, str], ...]]


def _slack(kind: str, status: str) -> Key:
    return ("countersign_slack_requests_total", (("kind", kind), ("status", status)))


def _decided(decision: str, source: str) -> Key:
    return ("countersign_decisions_total", (("decision", decision), ("source", source)))


async def _scrape(bot: Bot) -> tuple[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    response = await bot.http.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    text = await response.text()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    return text, samples


async def test_an_approved_call_is_counted_and_the_pending_gauge_follows_storage(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        _, samples = await _scrape(bot)
        assert samples[("countersign_pending_approvals", ())] == 1
        assert (
            samples[
                (
                    "countersign_slack_requests_total",
                    (("kind", "event_callback"), ("status", "200")),
                )
            ]
            == 1
        )

        [card] = bot.cards(ts)
        assert (await bot.click(card, APPROVE_ACTION, user="U2")).status == 200
        await bot.settle()
        text, samples = await _scrape(bot)

    assert executions.of("delete_record") == [{"id": "abc-123"}]
    assert samples[("countersign_pending_approvals", ())] == 0
    assert samples[_decided("approved", "button")] == 1
    assert samples[("countersign_decision_seconds_count", (("outcome", "approved"),))] == 1
    ok = (("outcome", "ok"), ("tool", "delete_record"))
    assert samples[("countersign_tool_executions_total", ok)] == 1
    assert samples[("countersign_tool_seconds_count", (("tool", "delete_record"),))] == 1
    clicks = (("kind", "block_actions"), ("status", "200"))
    assert samples[("countersign_slack_requests_total", clicks)] == 1
    for secret in ("abc-123", SECRET, "xoxb-test", "U1", "U2"):
        assert secret not in text


async def test_a_declined_call_and_a_forged_request_are_counted_by_kind(
    bot_with: BotFactory, executions: Executions
) -> None:
    async with bot_with(GATED) as (bot, _):
        ts = await bot.mention("delete record abc-123", user="U1")
        await bot.settle()
        [card] = bot.cards(ts)
        await bot.decline(card, reason="not today, secret plan")
        forged = await bot.send_event({"type": "app_mention"}, secret="not-the-secret")
        assert forged.status == 401
        text, samples = await _scrape(bot)
    assert executions.of("delete_record") == []
    declined = (("decision", "declined"), ("source", "modal"))
    assert samples[("countersign_decisions_total", declined)] == 1
    assert (
        samples[
            ("countersign_slack_requests_total", (("kind", "view_submission"), ("status", "200")))
        ]
        == 1
    )
    assert samples[_slack("unverified", "401")] == 1
    assert not any(name == "countersign_tool_executions_total" for name, _ in samples)
    assert "secret plan" not in text


async def test_each_app_has_its_own_registry(
    slack: FakeSlackAPI, store: Storage, executions: Executions
) -> None:
    agent, _ = make_agent([reply("hi")], executions)
    async with start_bot(slack, agent, store) as first, start_bot(slack, agent, store) as second:
        await first.mention("hello")
        await first.settle()
        _, one = await _scrape(first)
        _, two = await _scrape(second)
    key = ("countersign_slack_requests_total", (("kind", "event_callback"), ("status", "200")))
    assert one[key] == 1 and key not in two


async def test_decision_seconds_are_labelled_by_outcome_and_escalations_by_step(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        '[[rules]]\ntools = ["delete-*"]\nttl_seconds = 3600\n'
        'escalate = [{ after = "15m", notify = ["U9"] }, { after = "30m", notify = ["U9"] }]\n',
        encoding="utf-8",
    )
    ids = ["a1", "b2", "c3", "d4"]
    script = [*(call("delete_record", {"id": i}) for i in ids), *(reply("ok") for _ in ids)]
    agent, _ = make_agent(script, executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        for i in ids:
            await bot.mention(f"delete {i}", user="U1")
            await bot.settle()
        runs = {r.tool_calls[0].args["id"]: r for r in (await bot.agent.list_suspended_runs()).runs}
        start = max(r.tool_calls[0].suspended_at or r.suspended_at for r in runs.values())
        assert (await sweep(bot.services, now=start + timedelta(minutes=16))).escalated == 4
        await bot.agent.decide(Approve(), run_id=runs["a1"].run_id, decided_by="U2")
        await bot.agent.decide(Decline(), run_id=runs["b2"].run_id, decided_by="U2")
        withdrawn = Decline(reason="never mind", withdrawn=True)
        await bot.agent.decide(withdrawn, run_id=runs["c3"].run_id, decided_by="U1")
        await bot.settle()
        assert (await sweep(bot.services, now=start + timedelta(minutes=31))).escalated == 1
        assert (await sweep(bot.services, now=start + timedelta(hours=2))).expired == 1
        await bot.settle()
        text, samples = await _scrape(bot)
    for outcome in ("approved", "declined", "withdrawn", "expired"):
        key = ("countersign_decision_seconds_count", (("outcome", outcome),))
        assert samples[key] == 1, outcome
    assert samples[("countersign_escalations_total", (("step", "1"),))] == 4
    assert samples[("countersign_escalations_total", (("step", "2"),))] == 1
    for value in ("a1", "b2", "never mind", "U9"):
        assert value not in text


async def test_a_call_a_standing_grant_approved_is_timed_as_granted_and_its_use_counted(
    slack: FakeSlackAPI, store: Storage, executions: Executions, tmp_path: Path
) -> None:
    policy = tmp_path / "countersign.toml"
    policy.write_text(
        '[[rules]]\ntools = ["delete-*"]\ngrants = { max_seconds = 3600, max_uses = 5 }\n',
        encoding="utf-8",
    )
    script = [call("delete_record", {"id": "g1"}), reply("ok"), call("delete_record", {"id": "g1"})]
    agent, _ = make_agent([*script, reply("ok again")], executions)
    async with start_bot(slack, agent, store, env={"POLICY_FILE": str(policy)}) as bot:
        ts = await bot.mention("delete g1", user="U1")
        await bot.settle()
        [run] = (await bot.agent.list_suspended_runs()).runs
        grant = GrantRequest(seconds=600, max_uses=5)
        await bot.agent.decide(Approve(grant=grant), run_id=run.run_id, decided_by="U2")
        await bot.settle()
        await bot.mention("delete g1 again", user="U1", thread_ts=ts)
        await bot.settle()
        assert executions.of("delete_record") == [{"id": "g1"}, {"id": "g1"}]
        text, samples = await _scrape(bot)
    assert samples[("countersign_decision_seconds_count", (("outcome", "granted"),))] == 1
    assert samples[("countersign_decision_seconds_count", (("outcome", "approved"),))] == 1
    assert samples[("countersign_grant_uses_total", (("tool", "delete_record"),))] == 1
    assert "g1" not in text
