"""SPEC 11's last paragraph: a policy file in force is logged with its path and rule count, and
its ``[defaults]`` win over the environment only for the keys the file sets."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot._settings import DEMO_POLICY, load_settings

ENV = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
MINE = {"APPROVERS": "U9", "ALLOW_SELF_APPROVAL": "true", "APPROVAL_TTL_SECONDS": "60"}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "countersign.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_keys_left_out_of_defaults_leave_the_environment_in_force(tmp_path: Path) -> None:
    path = _write(tmp_path, '[defaults]\napprovers = ["U1"]\n\n[[rules]]\ntools = ["x"]\n')
    settings = load_settings({**ENV, **MINE, "POLICY_FILE": str(path)})
    assert settings.approvers == ("U1",)
    assert settings.allow_self_approval is True
    assert settings.approval_ttl_seconds == 60
    nothing = load_settings({**ENV, **MINE, "POLICY_FILE": str(_write(tmp_path, ""))})
    assert (nothing.approvers, nothing.allow_self_approval, nothing.approval_ttl_seconds) == (
        ("U9",),
        True,
        60,
    )


def test_keys_the_file_sets_win_even_when_they_restate_a_default(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "[defaults]\napprovers = []\nallow_self_approval = false\nttl_seconds = 86400\n",
    )
    settings = load_settings({**ENV, **MINE, "POLICY_FILE": str(path)})
    assert settings.approvers == ()  # set, and empty: anyone
    assert settings.allow_self_approval is False
    assert settings.approval_ttl_seconds == 86400


def test_the_demo_policy_leaves_approval_ttl_seconds_in_force() -> None:
    """``APPROVAL_TTL_SECONDS=60 make run``: the local workspace serves the demo policy."""
    local = load_settings({"APPROVAL_TTL_SECONDS": "60"})
    assert local.policy_file == str(DEMO_POLICY)
    assert local.approval_ttl_seconds == 60
    assert load_settings({}).approval_ttl_seconds == 86400


def test_the_policy_in_force_is_logged_once_with_its_path_and_rule_count(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, '[[rules]]\ntools = ["a"]\n\n[[rules]]\ntools = ["b"]\n')
    with caplog.at_level(logging.INFO, logger="bot"):
        load_settings({**ENV, "POLICY_FILE": str(path)})
    lines = [r for r in caplog.records if r.name == "bot._settings"]
    assert [r.levelno for r in lines] == [logging.INFO]
    message = lines[0].getMessage()
    assert str(path) in message and "2 rules" in message and "\n" not in message
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bot"):
        load_settings(ENV)  # no policy file: nothing to say
    assert [r for r in caplog.records if r.name == "bot._settings"] == []
