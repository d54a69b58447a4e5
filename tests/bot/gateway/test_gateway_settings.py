"""The gateway's settings (SPEC 8, 17): read with the rest, every problem reported together,
listed by ``--help``; on by default in the local workspace only."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import BotConfigError, load_settings
from bot.__main__ import main
from bot._settings_checks import client_settings
from tests.bot.gateway.harness import tokens_file

SLACK = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}


def test_the_gateway_on_in_slack_needs_a_channel_and_peoples_tokens_said_together() -> None:
    with pytest.raises(BotConfigError) as refused:
        load_settings({**SLACK, "GATEWAY": "true", "GATEWAY_HOLD_SECONDS": "-1"})
    problems = refused.value.problems
    assert any(p.startswith("Set GATEWAY_CHANNEL") for p in problems)
    assert any(p.startswith("GATEWAY=true needs API_TOKENS") for p in problems)
    assert any(
        p.startswith("GATEWAY_HOLD_SECONDS must be a whole number from 0 to") for p in problems
    )


def test_bad_values_are_reported_with_how_to_fix_them(tmp_path: Path) -> None:
    env = {
        **SLACK,
        "GATEWAY": "maybe",
        "GATEWAY_CHANNEL": "#ops",
        "COUNTERSIGN_URL": "localhost:3000",
        "API_TOKENS": str(tokens_file(tmp_path / "tokens.toml")),
    }
    with pytest.raises(BotConfigError) as refused:
        load_settings(env)
    text = "\n".join(refused.value.problems)
    assert "GATEWAY must be true or false" in text
    assert "GATEWAY_CHANNEL must be a Slack channel id" in text
    assert "COUNTERSIGN_URL must be the bot's base URL" in text


def test_on_in_the_local_workspace_and_off_in_slack_unless_set(tmp_path: Path) -> None:
    assert load_settings({}).gateway_on
    assert not load_settings({"GATEWAY": "false"}).gateway_on
    assert not load_settings(SLACK).gateway_on
    env = {
        **SLACK,
        "GATEWAY_CHANNEL": "C0GATE",
        "API_TOKENS": str(tokens_file(tmp_path / "tokens.toml")),
    }
    on = load_settings(env, overrides={"GATEWAY": "true"})  # python -m bot gateway
    assert on.gateway_on and on.gateway_channel == "C0GATE" and on.gateway_hold_seconds == 45


def test_the_client_commands_read_only_their_two_variables() -> None:
    client = client_settings({"COUNTERSIGN_URL": "http://bot:3000/", "COUNTERSIGN_TOKEN": "t"})
    assert (client.url, client.token, client.problems) == ("http://bot:3000", "t", ())
    default = client_settings({})
    assert (default.url, default.token) == ("http://127.0.0.1:3000", None)


def test_help_lists_the_gateway_variables_and_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in ("GATEWAY ", "GATEWAY_CHANNEL", "GATEWAY_HOLD_SECONDS", "COUNTERSIGN_URL"):
        assert name in out
    assert "(default: 45)" in out and "gateway" in out and "hook" in out
