"""``python -m bench gateway``: the gateway's overhead on a call it does not hold (direct vs
through the gateway, in the same run) and a held call's path, one JSON line (timings are
measured in bench/, never asserted)."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main

FIELDS = {
    "direct_median_ms",
    "gateway_median_ms",
    "ratio",
    "added_ms",
    "held_median_ms",
    "held_max_ms",
}

pytestmark = [pytest.mark.slow, pytest.mark.processes]


def test_bench_gateway_prints_one_json_line_with_both_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["gateway", "--gateway-calls", "5", "--held", "2"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    figure = json.loads(line)
    assert figure["figure"] == "gateway" and figure["calls"] == 5
    assert set(figure) >= FIELDS
    assert all(isinstance(figure[field], float) for field in FIELDS)
    assert figure["held_calls"] == 2 and figure["cards"] == 2  # each held call: one card
    assert figure["ratio"] == pytest.approx(
        figure["gateway_median_ms"] / figure["direct_median_ms"], abs=0.02
    )
