"""``python -m bot``: configuration checked, ``auth.test`` at start, HTTP serving, exit codes."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from agents import RunnerClosed
from agents.models import call, reply
from bot import BotConfigError, load_settings
from bot.__main__ import main
from bot._serve import build_agent, running_bot
from tests.bot.bot_process import serve_bot_process
from tests.bot.harness import SECRET, Executions, make_agent
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_signing import event_request


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlackAPI]:
    async with FakeSlackAPI(valid_token="xoxb-good") as fake:
        yield fake


def _env(slack: FakeSlackAPI, token: str = "xoxb-good") -> dict[str, str]:
    return {
        "SLACK_BOT_TOKEN": token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "STORAGE_URL": "memory://",
        "HOST": "127.0.0.1",
        "PORT": "0",
    }


async def test_http_mode_checks_the_token_and_serves_events_and_health(
    slack: FakeSlackAPI,
) -> None:
    agent, _ = make_agent([reply("Up and running.")], Executions())
    async with running_bot(load_settings(_env(slack)), agent=agent) as (services, runner):
        assert len(slack.calls_to("auth.test")) == 1
        [address] = runner.addresses
        base = f"http://127.0.0.1:{address[1]}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as response:
                assert response.status == 200
                assert await response.json() == {"ok": True, "mode": "http", "agent": "ops"}
            envelope = {
                "type": "event_callback",
                "team_id": "T1",
                "event_id": "Ev1",
                "event": {
                    "type": "app_mention",
                    "user": "U1",
                    "text": "<@UBOT> hi",
                    "ts": "5.0",
                    "channel": "C1",
                },
            }
            body, headers = event_request(envelope, SECRET)
            async with http.post(f"{base}/slack/events", data=body, headers=headers) as response:
                assert response.status == 200
        await services.runner.drain()
        assert [m.text for m in slack.thread("C1", "5.0")] == ["Up and running."]


async def test_the_bot_works_on_its_agents_runner_and_finishes_that_work_at_shutdown(
    slack: FakeSlackAPI,
) -> None:
    agent, _ = make_agent([reply("Answered before stopping.")], Executions())
    async with running_bot(load_settings(_env(slack)), agent=agent) as (services, runner):
        assert services.runner is agent.runner
        [address] = runner.addresses
        envelope = {
            "type": "event_callback",
            "team_id": "T1",
            "event_id": "EvStop",
            "event": {
                "type": "app_mention",
                "user": "U1",
                "text": "<@UBOT> hi",
                "ts": "6.0",
                "channel": "C1",
            },
        }
        body, headers = event_request(envelope, SECRET)
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"http://127.0.0.1:{address[1]}/slack/events", data=body, headers=headers
            ) as response,
        ):
            assert response.status == 200
    # stopped without waiting: shutdown drained the one runner, then closed it
    assert [m.text for m in slack.thread("C1", "6.0")] == ["Answered before stopping."]
    idle = asyncio.sleep(0)
    with pytest.raises(RunnerClosed):
        agent.runner.submit(idle)


async def test_the_running_bot_serves_one_agent_with_the_rules_storage_and_metrics(
    slack: FakeSlackAPI,
) -> None:
    executions = Executions()
    agent, _ = make_agent([call("delete_record", {"id": "7"}), reply("Deleted 7.")], executions)
    env = _env(slack) | {"APPROVERS": "U5", "API_TOKEN": "t", "API_TOKEN_ACTS_FOR_USERS": "true"}
    async with running_bot(load_settings(env), agent=agent) as (services, runner):
        served = services.agent
        assert served is not agent and served.storage is services.storage
        first = await served.generate("delete 7", requested_by="U1")
        ids = {"runId": first.run_id, "toolCallId": first.pending[0].tool_call_id}
        [address] = runner.addresses
        base = f"http://127.0.0.1:{address[1]}"
        url = f"{base}/api/agents/ops/approve-tool-call"
        auth = {"Authorization": "Bearer t"}
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json={**ids, "decidedBy": "U9"}, headers=auth) as refused:
                assert refused.status == 403
            async with http.post(url, json={**ids, "decidedBy": "U5"}, headers=auth) as taken:
                assert taken.status == 200
            await services.runner.drain()
            async with http.get(f"{base}/metrics") as metrics:
                text = await metrics.text()
    assert executions.of("delete_record") == [{"id": "7"}]
    assert 'countersign_decisions_total{decision="approved",source="api"} 1.0' in text


async def test_a_rejected_token_stops_the_start(slack: FakeSlackAPI) -> None:
    agent, _ = make_agent([], Executions())
    with pytest.raises(BotConfigError, match=r"auth\.test: invalid_auth"):
        async with running_bot(load_settings(_env(slack, "xoxb-bad")), agent=agent):
            pass


def test_main_reports_every_configuration_problem_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "")
    monkeypatch.setenv("STORAGE_URL", "ftp://nowhere")
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "SLACK_SIGNING_SECRET" in err and "STORAGE_URL" in err


async def test_socket_mode_connects_and_handles_events_without_a_signing_secret() -> None:
    async with FakeSlackAPI() as fake:
        env = _env(fake, "xoxb-any") | {"SLACK_APP_TOKEN": "xapp-1", "SLACK_SIGNING_SECRET": ""}
        settings = load_settings(env)
        assert settings.mode == "socket"
        agent, _ = make_agent([reply("Hello over the socket.")], Executions())
        async with running_bot(settings, agent=agent) as (services, runner):
            [connect] = fake.calls_to("apps.connections.open")
            [address] = runner.addresses
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{address[1]}/readyz") as ready,
            ):
                assert ready.status == 200
                assert (await ready.json())["checks"] == {
                    "storage": "ok",
                    "slack": "ok",
                    "socket": "ok",
                    "draining": "ok",
                }
            assert connect.token == "xapp-1"
            ack = await fake.push(
                {
                    "type": "event_callback",
                    "team_id": "T1",
                    "event_id": "EvS1",
                    "event": {
                        "type": "app_mention",
                        "user": "U1",
                        "text": "<@UBOT> hi",
                        "ts": "7.0",
                        "channel": "C1",
                    },
                }
            )
            assert "envelope_id" in ack
            await services.runner.drain()
            assert [m.text for m in fake.thread("C1", "7.0")] == ["Hello over the socket."]


def test_the_built_in_agent_is_served_when_bot_agent_is_unset(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"})
    agent = build_agent(settings)
    assert agent.id == "ops" and set(agent.agents) == {"billing"}
    assert "OPENAI_API_KEY is not set" in caplog.text
    served = build_agent(
        load_settings({**_env_http(), "BOT_AGENT": "tests.bot.served_agents:agent"})
    )
    assert served.id == "served"


def _env_http() -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}


@pytest.mark.processes
async def test_python_m_bot_serves_until_sigterm_then_exits_cleanly(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    env = {**os.environ, **_env(slack), "LOG_LEVEL": "WARNING", "OPENAI_API_KEY": "sk-test"}
    for name in ("SLACK_APP_TOKEN", "BOT_AGENT", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        env.pop(name, None)
    async with serve_bot_process(env, tmp_path) as bot:
        assert bot.health == {"ok": True, "mode": "http", "agent": "ops"}
        assert len(slack.calls_to("auth.test")) == 1
    assert bot.returncode == 0
    assert "xoxb-good" not in bot.stderr and SECRET not in bot.stderr


@pytest.mark.processes
async def test_python_m_bot_starts_without_a_warning_a_newcomer_must_wonder_about(
    slack: FakeSlackAPI, tmp_path: Path
) -> None:
    """Nothing false or puzzling at start-up: no bolt "token will be unused" notice (bolt
    reads SLACK_BOT_TOKEN itself and our client wins, by design), no warning at all."""
    env = {**os.environ, **_env(slack), "LOG_LEVEL": "INFO", "OPENAI_API_KEY": "sk-test"}
    for name in ("SLACK_APP_TOKEN", "BOT_AGENT", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        env.pop(name, None)
    async with serve_bot_process(env, tmp_path) as bot:
        assert bot.health["mode"] == "http"
    assert "will be unused" not in bot.stderr
    assert [line for line in bot.stderr.splitlines() if " WARNING " in line] == []


def test_help_lists_every_variable_with_its_default_and_starts_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot._settings import Settings

    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for name, field in Settings.model_fields.items():
        if (field.description or "").startswith("``"):  # not the parsed policy, mcp_environ
            assert name.upper() in out, name
    assert "PORT" in out and "(default: 3000)" in out
    assert "(default: gpt-5-mini)" in out and "(default: INFO)" in out


@pytest.mark.parametrize("argv", [["--bogus-flag"], ["serve"], ["-x", "1"]])
def test_an_unknown_argument_is_an_error_not_ignored(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_help_says_each_default_once_in_lines_that_fit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No entry says "unset" twice ("(unset: …) (default: unset)"): a variable's default is
    shown once, and the lines fit a terminal of 100 columns."""
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    listed = out.split("environment variables", 1)[1].splitlines()[1:]
    entries: list[str] = []
    for line in listed:
        if line.startswith("  ") and not line.startswith("   "):
            entries.append(line.strip())
        elif entries:
            entries[-1] += " " + line.strip()
    assert len(entries) >= 25
    for entry in entries:
        assert entry.count("unset") + entry.count("(default:") <= 1, entry
    assert "MODEL" in out and "/call <tool> key=value" in out
    assert max(len(line) for line in out.splitlines()) <= 100
