"""``python -m bench scale``: the growth curves of issue 35, one JSON line per curve with its
exponent (timings are measured in bench/, never asserted; the shape, the Slack calls per decision
and the clicks' outcome are)."""

from __future__ import annotations

import json
import math
import os

import pytest

from bench.__main__ import main
from bench._scale import CURVE_NAMES, Budget, _points, _policy, exponent, run_scale
from tests.backends import REDIS_ENV

CURVES = list(CURVE_NAMES)
assert "redis_grants" in CURVES and "click_ack" in CURVES


def test_the_exponent_is_the_growth_per_tenfold_from_the_first_point_to_the_last() -> None:
    assert exponent({1_000: 2.0, 10_000: 20.0}) == 1.0
    assert exponent({1_000: 3.0, 10_000: 3.0, 100_000: 3.0}) == 0.0
    assert exponent({1_000: 1.0, 100_000: 1.15**2}) == round(math.log10(1.15), 3)
    assert exponent({1_000: 5.0}) is None


@pytest.mark.processes  # the policy is read in a process of its own, as at start-up
def test_the_policy_curve_is_held_to_spec_11_not_to_flatness() -> None:
    """A file is read whole: its start grows with it; the goal is under 2 s up to 10,000
    rules and a match under 1 ms."""
    line = _policy([100, 1_000], Budget(600))
    assert line["curve"] == "policy_start" and line["ok"] is True
    assert "SPEC 11" in line["goal"]
    assert set(line["match_median_us"]) == {"100", "1000"}


def test_a_point_past_the_second_runs_only_when_its_estimate_fits_the_budget() -> None:
    measured: list[int] = []

    def measure(n: int) -> int:
        measured.append(n)
        return n

    points, skipped = _points([10, 100, 10**12], Budget(60.0), measure)
    assert measured == [10, 100] and skipped == [10**12] and points == {10: 10, 100: 100}


def test_a_curve_that_fails_is_a_line_with_its_error_and_the_run_goes_on() -> None:
    unreachable = "redis://127.0.0.1:1/0"
    lines = list(run_scale([10, 100], redis_url=unreachable, curves={"redis_grants"}))
    assert [(line["curve"], "error" in line) for line in lines] == [("redis_grants", True)]


@pytest.mark.slow
@pytest.mark.processes
@pytest.mark.skipif(not os.environ.get(REDIS_ENV), reason=f"set {REDIS_ENV}")
def test_scale_prints_one_line_per_curve_with_its_exponent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["scale", "--scale-sizes", "10,100", "--clicks-in-flight", "6"]
    assert main([*argv, "--redis", os.environ[REDIS_ENV]]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["curve"] for line in lines] == CURVES
    for line in lines:
        assert line["figure"] == "scale" and "error" not in line
        assert len(line["points"]) == 2 and line["skipped"] == []
        assert isinstance(line["exponent"], float) and isinstance(line["ok"], bool)
        assert line["goal"]
    curves = {line["curve"]: line for line in lines}
    assert list(curves["sweep"]["points"]) == ["10", "100"]
    # 1 then 10 people with Home open who decide nothing: a decision publishes for the 3
    # approvers only, whatever the number of onlookers
    home = curves["home_publishes"]
    assert home["points"] == {"1": 3.0, "10": 3.0} and home["exponent"] == 0.0
    clicks = curves["click_ack"]
    assert list(clicks["points"]) == ["1", "6"] and clicks["each_card_ran_once"] is True
    assert set(curves["startup_cpu"]["starts_s"]) == {"10", "100"}
