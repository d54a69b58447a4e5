"""Configuration is read in one place and every problem is reported together."""

from __future__ import annotations

import pytest

from bot import BotConfigError, load_settings
from bot._agent_loader import AgentLoadError, import_agent

HTTP = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "secret"}


def _problems(env: dict[str, str]) -> list[str]:
    with pytest.raises(BotConfigError) as caught:
        load_settings(env)
    return caught.value.problems


def test_mode_follows_the_tokens() -> None:
    assert load_settings(HTTP).mode == "http"
    assert load_settings({**HTTP, "SLACK_APP_TOKEN": "xapp-1"}).mode == "socket"
    assert (
        load_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}).mode == "socket"
    )
    assert load_settings({}).mode == "local"


def test_defaults_per_spec() -> None:
    settings = load_settings(HTTP)
    assert settings.port == 3000
    assert settings.approval_ttl_seconds == 86400
    assert settings.allow_self_approval is False
    assert settings.approvers == ()
    assert settings.api_token is None


def test_values_are_parsed() -> None:
    settings = load_settings(
        {
            **HTTP,
            "PORT": "8080",
            "APPROVERS": "U1, S2 W3",
            "ALLOW_SELF_APPROVAL": "true",
            "APPROVAL_TTL_SECONDS": "600",
            "STORAGE_URL": "memory://",
            "SLACK_API_URL": "http://127.0.0.1:9/api/",
            "LOG_LEVEL": "debug",
        }
    )
    assert settings.port == 8080
    assert settings.approvers == ("U1", "S2", "W3")
    assert settings.allow_self_approval is True
    assert settings.approval_ttl_seconds == 600
    assert settings.log_level == "DEBUG"


def test_every_problem_is_reported_at_once_with_how_to_fix_it() -> None:
    problems = _problems(
        {
            "SLACK_BOT_TOKEN": "xoxb-1",
            "SLACK_SIGNING_SECRET": "  ",
            "SLACK_CLIENT_ID": "1.2",
            "SLACK_CLIENT_SECRET": "cs",
            "STORAGE_URL": "mysql://db/countersign",
            "BOT_AGENT": "no_colon_here",
            "PORT": "http",
        }
    )
    text = "\n".join(problems)
    assert len(problems) == 5
    assert "Set SLACK_SIGNING_SECRET (Slack app → Basic Information → Signing Secret)" in text
    assert "Unset SLACK_CLIENT_ID and SLACK_CLIENT_SECRET" in text
    assert "STORAGE_URL must start with" in text
    assert "module:attribute" in text
    assert "PORT" in text


def test_secrets_never_appear_in_the_error() -> None:
    with pytest.raises(BotConfigError) as caught:
        load_settings({"SLACK_BOT_TOKEN": "xoxb-VERYSECRET", "STORAGE_URL": "bad"})
    assert "VERYSECRET" not in str(caught.value)
    assert "VERYSECRET" not in repr(load_settings(HTTP | {"SLACK_BOT_TOKEN": "xoxb-VERYSECRET"}))


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("tests.bot.served_agents", "module:attribute"),
        ("tests.bot.no_such_module:agent", "cannot import module"),
        ("tests.bot.served_agents:missing", "has no attribute"),
        ("tests.bot.served_agents:not_an_agent", "not an agents.Agent"),
    ],
)
def test_bad_bot_agent_is_explained(spec: str, fragment: str) -> None:
    [problem] = _problems({**HTTP, "BOT_AGENT": spec})
    assert fragment in problem


def test_bot_agent_names_an_agent() -> None:
    settings = load_settings({**HTTP, "BOT_AGENT": "tests.bot.served_agents:agent"})
    assert import_agent(settings.bot_agent or "").id == "served"
    with pytest.raises(AgentLoadError):
        import_agent("tests.bot.served_agents:not_an_agent")


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"SLACK_BOT_TOKEN": "xoxp-user"}, "xoxb-"),
        ({**HTTP, "SLACK_APP_TOKEN": "xoxb-wrong"}, "xapp-"),
        ({"SLACK_APP_TOKEN": "xapp-1"}, "Set SLACK_BOT_TOKEN too"),
        ({"SLACK_SIGNING_SECRET": "s"}, "Set SLACK_BOT_TOKEN"),
        ({**HTTP, "ALLOW_SELF_APPROVAL": "maybe"}, "ALLOW_SELF_APPROVAL"),
        ({**HTTP, "APPROVERS": "U1 @alice"}, "'@alice'"),
        ({**HTTP, "APPROVAL_TTL_SECONDS": "-1"}, "APPROVAL_TTL_SECONDS"),
        ({**HTTP, "LOG_LEVEL": "loud"}, "LOG_LEVEL"),
    ],
)
def test_invalid_values_are_refused(env: dict[str, str], fragment: str) -> None:
    assert any(fragment in p for p in _problems(env))
