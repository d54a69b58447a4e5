"""``python -m bench policy``: start-up and match time of a large policy file, one JSON line."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main
from bench._policy import policy_calls, policy_text, run_policy

FIELDS = {"read_ms", "compile_ms", "start_ms", "match_median_us", "match_p99_us", "match_max_us"}


@pytest.mark.processes
def test_the_policy_figure_reports_start_up_and_match_times_of_the_file() -> None:
    figure = run_policy(rules=300, calls=60)
    assert figure["figure"] == "policy"
    assert (figure["rules"], figure["calls"]) == (300, 60)
    assert 0 < figure["matched"] < 60  # the calls hit rules and miss them
    for field in FIELDS:
        assert isinstance(figure[field], float) and figure[field] >= 0, field
    assert figure["start_ms"] == pytest.approx(figure["read_ms"] + figure["compile_ms"], abs=0.2)
    assert figure["match_median_us"] <= figure["match_p99_us"] <= figure["match_max_us"]
    json.dumps(figure)


def test_the_generated_file_has_the_rules_asked_for_and_every_kind_of_glob() -> None:
    text = policy_text(50)
    assert text.count("[[rules]]") == 50
    for glob in ('["tool_0"]', '["svc6_*"]', '["job8-?", "job8-[ab]x"]', '["*_9"]', "github_*"):
        assert glob in text, glob
    assert len(policy_calls(50, 12)) == 12


@pytest.mark.processes
def test_bench_policy_prints_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "--rules", "40", "--calls", "10"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    figure = json.loads(line)
    assert figure["figure"] == "policy" and figure["rules"] == 40 and set(figure) >= FIELDS
