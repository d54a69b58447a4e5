"""``python -m bot.policy FILE``: a policy file checked without starting the bot, with the
problems start-up would report (exit 2), or timed with ``--time``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bot.policy.__main__ import main


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "countersign.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_file_is_summed_up_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, '[[rules]]\ntools = ["a"]\n[[rules]]\ntools = ["b*"]\n')
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: 2 rules, 0 MCP servers\n"


def test_a_broken_file_prints_every_problem_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, '[[rules]]\ntools = ["a"]\napprovals = 0\nttl_seconds = 5\n')
    assert main([str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: rule 1: approvals: must be at least 1, got 0",
        f"{path}: rule 1: ttl_seconds: must be at least 60, got 5",
    ]


def test_escalation_is_checked_against_approval_ttl_seconds_and_no_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(
        tmp_path, '[[rules]]\ntools = ["a"]\nescalate = [{ after = "2h", notify = ["U1"] }]\n'
    )
    assert main([str(path)]) == 0  # a day by default
    monkeypatch.setenv("APPROVAL_TTL_SECONDS", "3600")
    assert main([str(path)]) == 2
    assert "(3600 s, APPROVAL_TTL_SECONDS)" in capsys.readouterr().err
    monkeypatch.delenv("POLICY_FILE", raising=False)
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")  # no ./countersign.toml there
    assert main([]) == 2
    assert "no policy file" in capsys.readouterr().err


def test_time_matches_each_call_read_from_stdin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        '[[rules]]\ntools = ["refund"]\nagents = ["ops/billing"]\nargs_above = { amount = 1000 }\n',
    )
    calls = [
        {"tool": "refund", "agent": "ops/billing", "args": {"amount": 5000}},
        {"tool": "refund", "agent": "ops/billing", "args": {"amount": 5}},
        {"tool": "list", "id": "list-records"},
    ]
    stdin = io.StringIO("".join(json.dumps(c) + "\n" for c in calls))
    assert main([str(path), "--time"], stdin=stdin) == 0
    figure = json.loads(capsys.readouterr().out)
    assert (figure["rules"], figure["calls"], figure["matched"]) == (1, 3, 1)
