"""The benchmark runs and reports its figure (timings are measured in bench/, never asserted)."""

import json

import pytest

from bench.__main__ import main
from bench._cycle import run_cycles


async def test_cycle_benchmark_reports_one_json_figure() -> None:
    figure = await run_cycles("memory://", cycles=3, warmup=1)
    assert figure["figure"] == "cycle" and figure["cycles"] == 3
    assert set(figure) >= {"median_ms", "p99_ms", "cycles_per_s", "snapshot_bytes"}
    assert 0 < figure["snapshot_bytes"] < 4096


async def test_listing_benchmark_counts_every_stored_run() -> None:
    from bench._listing import run_listing

    figure = await run_listing("memory://", runs=250, queries=3)
    assert figure["stored_runs"] == 250 and figure["figure"] == "list_suspended_runs"


def test_cli_prints_one_json_line_per_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cycle", "--storage", "memory://", "--cycles", "2"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["figure"] == "cycle"


def test_cli_reports_a_failing_figure_as_an_error_line_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--storage", "nosuch://x", "--runs", "1"]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["figure"] == "list_suspended_runs" and "error" in json.loads(line)
