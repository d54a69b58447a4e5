"""Configuration is read in one place and every problem is reported together."""

from __future__ import annotations

import hashlib
from pathlib import Path

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


# -- API tokens (SPEC 7) ---------------------------------------------------------------------
def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_the_per_person_tokens_file_is_read_with_each_tokens_user(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(
        f'[[tokens]]\nuser = "U1"\nsha256 = "{_sha("a").upper()}"\n\n'
        f'[[tokens]]\nuser = "W2"\nsha256 = "{_sha("b")}"\n'
    )
    settings = load_settings({**HTTP, "API_TOKENS": str(path)})
    assert [(t.user, t.sha256) for t in settings.api_people] == [
        ("U1", _sha("a")),
        ("W2", _sha("b")),
    ]
    assert settings.api_token_acts_for_users is False


def test_every_problem_of_a_bad_tokens_file_is_reported_at_once_one_line_each(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(
        '[[tokens]]\nuser = "S1"\nsha256 = "my-plain-token"\n\n'
        f'[[tokens]]\nsha256 = "{_sha("b")}"\ntoken = "x"\n\n'
        f'[[tokens]]\nuser = "U3"\nsha256 = "{_sha("c")}"\n\n'
        f'[[tokens]]\nuser = "U4"\nsha256 = "{_sha("c")}"\n'
    )
    problems = _problems({**HTTP, "API_TOKENS": str(path), "API_TOKEN_ACTS_FOR_USERS": "yes"})
    assert problems == [
        "API_TOKEN_ACTS_FOR_USERS=true needs API_TOKEN (the service token whose decidedBy is "
        "taken as the decider): set API_TOKEN, or unset API_TOKEN_ACTS_FOR_USERS",
        f"{path}: token 1: user: 'S1' is not a Slack user id (U…/W…)",
        f"{path}: token 1: sha256: must be the 64 hex digits of the token's SHA-256 (never the "
        "token itself)",
        f"{path}: token 2: user: missing (required)",
        f"{path}: token 2: token: unknown key",
    ]
    assert "my-plain-token" not in "\n".join(problems)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[[tokens]\n", "not valid TOML"),
        ("tokens = []\n", "tokens: must not be empty"),
        ('tokens = { user = "U1" }\n', "tokens: must be one [[tokens]] section per token"),
        (
            f'[[tokens]]\nuser = 5\nsha256 = "{_sha("c")}"\n',
            "token 1: user: must be text in quotes, got 5",
        ),
        (f'[[tokens]]\nuser = "U1"\nsha256 = "{_sha("c")}"\n' * 2, "the same token as token 1"),
    ],
)
def test_a_tokens_file_that_cannot_be_used_is_explained(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(text)
    [problem] = _problems({**HTTP, "API_TOKENS": str(path)})
    assert problem.startswith(f"{path}: ") and fragment in problem


def test_a_missing_tokens_file_and_a_service_token_that_is_a_persons_are_refused(
    tmp_path: Path,
) -> None:
    [missing] = _problems({**HTTP, "API_TOKENS": str(tmp_path / "nope.toml")})
    assert "cannot read the API tokens file" in missing and "API_TOKENS" in missing
    path = tmp_path / "tokens.toml"
    path.write_text(f'[[tokens]]\nuser = "U1"\nsha256 = "{_sha("s3cr3t-shared")}"\n')
    [shared] = _problems({**HTTP, "API_TOKENS": str(path), "API_TOKEN": "s3cr3t-shared"})
    assert "API_TOKEN is also a person's token" in shared and "s3cr3t" not in shared
