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
