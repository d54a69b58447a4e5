"""The benchmark runs and reports its figures (timings are measured in bench/, never asserted)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import _report, main
from bench._cycle import run_concurrent, run_cycles
from bench._floor import open_floor
from bench.peers._peer_timing import floor_once, time_cycles
from storage import ClaimRecord, InMemoryStorage, StateChange
from tests.backends import SHARED_BACKENDS, unique_url

SQL_FIELDS = {"statements_per_cycle", "transactions_per_cycle", "commits_per_cycle"}
POSTGRES_FIELDS = SQL_FIELDS | {"round_trips_per_cycle"}
REDIS_FIELDS = {"redis_commands_per_cycle", "redis_round_trips_per_cycle"}


async def test_cycle_benchmark_reports_one_json_figure() -> None:
    figure = await run_cycles("memory://", cycles=3, warmup=1, in_flight=4)
    assert figure["figure"] == "cycle" and figure["cycles"] == 3
    assert set(figure) >= {"median_ms", "p99_ms", "cycles_per_s", "snapshot_bytes"}
    assert 0 < figure["snapshot_bytes"] < 4096
    assert not set(figure) & (SQL_FIELDS | REDIS_FIELDS)  # nothing to count in a dict
    assert "claim_cost_ratio" not in figure  # no log to sync
    json.dumps(figure)


async def test_cycle_on_sqlite_counts_statements_transactions_and_commits(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bench.db'}"
    figure = await run_cycles(url, cycles=3, warmup=1, in_flight=0)
    for field in SQL_FIELDS:
        assert isinstance(figure[field], int) and figure[field] > 0, field
    # every commit ends a transaction; every transaction sends at least one statement
    assert figure["commits_per_cycle"] <= figure["transactions_per_cycle"]
    assert figure["transactions_per_cycle"] <= figure["statements_per_cycle"]


async def test_cycle_on_a_sqlite_file_prices_the_durable_claim_in_log_syncs(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bench.db'}"
    figure = await run_cycles(url, cycles=3, warmup=1, in_flight=0)
    assert figure["durable_claims"] is True
    assert figure["nondurable_median_ms"] > 0 and figure["fsync_median_ms"] > 0
    cost = (figure["median_ms"] - figure["nondurable_median_ms"]) / figure["fsync_median_ms"]
    assert figure["claim_cost_ratio"] == pytest.approx(cost, rel=0.05, abs=0.2)
    assert figure["claim_cost_goal"] == 1.5
    # the log the claim's sync flushes: one cycle's frames, counted by SQLite itself
    assert 5 <= figure["log_frames_per_cycle"] <= 200
    assert figure["fsync_log_median_ms"] > 0
    to_log = (figure["median_ms"] - figure["nondurable_median_ms"]) / figure["fsync_log_median_ms"]
    assert figure["claim_cost_ratio_to_log_sync"] == pytest.approx(to_log, rel=0.05, abs=0.2)
    # and against a plain sync made at the same point of the same cycle (a third store)
    assert figure["synced_median_ms"] > 0
    assert "claim_cost_ratio_in_cycle" in figure
    # and the claim's commit alone against one sync of its own log
    assert figure["claim_alone_durable_ms"] > 0 and figure["log_sync_ms"] > 0
    alone = (figure["claim_alone_durable_ms"] - figure["claim_alone_ms"]) / figure["log_sync_ms"]
    assert figure["claim_alone_ratio"] == pytest.approx(alone, rel=0.05, abs=0.2)
    leftovers = await asyncio.to_thread(lambda: sorted(p.name for p in tmp_path.iterdir()))
    assert not [name for name in leftovers if ".probe" in name or "-alone-" in name]
    plain = await run_cycles(url, cycles=2, warmup=0, in_flight=0, durable_claims=False)
    assert "claim_cost_ratio" not in plain  # nothing to price without durable claims


@pytest.mark.parametrize("backend", SHARED_BACKENDS)
async def test_cycle_counts_traffic_and_times_a_floor_on_every_shared_backend(
    backend: str, tmp_path: Path
) -> None:
    async with unique_url(backend, tmp_path) as url:
        figure = await run_cycles(url, cycles=2, warmup=1, in_flight=3)
    fields = {"redis": REDIS_FIELDS, "postgres": POSTGRES_FIELDS}.get(backend, SQL_FIELDS)
    assert all(isinstance(figure[f], int) and figure[f] > 0 for f in fields), figure
    assert figure["floor_median_ms"] > 0
    ratio = figure["median_ms"] / figure["floor_median_ms"]  # both rounded for the report
    # to one decimal, from the unrounded times: the floor's rounding (4 decimals of a ~0.07 ms
    # median) alone moves the recomputed ratio by up to ~0.2 %
    assert figure["ratio_to_floor"] == pytest.approx(ratio, rel=0.005, abs=0.051)
    assert figure["concurrent_failures"] == 0 and figure["in_flight"] == 3


async def test_concurrent_cycles_all_finish_and_are_reported_with_how_many_in_flight() -> None:
    figure = await run_cycles("memory://", cycles=1, warmup=0, in_flight=12)
    assert figure["in_flight"] == 12 and figure["concurrent_failures"] == 0
    assert figure["concurrent_cycles_per_s"] > 0 and "error" not in figure


class EverySecondSuspendFails(InMemoryStorage):
    """Storage whose every second snapshot write fails, as a full disk would (a fake backend)."""

    saves = 0

    async def commit(self, change: StateChange) -> ClaimRecord | None:
        if change.snapshot is not None and change.snapshot.version == 1:
            self.saves += 1
            if self.saves % 2 == 0:
                raise OSError("disk full")
        return await super().commit(change)


async def test_failed_concurrent_cycles_are_counted_and_the_first_error_is_shown() -> None:
    figure = await run_concurrent(EverySecondSuspendFails(), 6, "fail")
    failures = figure["concurrent_failures"]
    assert 0 < failures < 6 and figure["in_flight"] == 6
    assert f"{failures}/6 concurrent cycles failed" in figure["error"]
    assert "disk full" in figure["error"]


@pytest.mark.parametrize("backend", ["memory", *SHARED_BACKENDS])
async def test_the_floor_writes_reads_and_deletes_one_row(backend: str, tmp_path: Path) -> None:
    async with unique_url(backend, tmp_path) as url:
        floor = await open_floor(url)
        try:
            assert await floor_once(floor, 1) > 0
            with pytest.raises(KeyError):  # deleted again
                await floor.read("floor-1")
            assert await floor_once(floor, 1) > 0  # so the same key can be written again
        finally:
            await floor.close()


async def test_each_timed_cycle_is_followed_by_one_floor_round() -> None:
    calls: list[str] = []

    class CountingFloor:
        async def write(self, key: str, value: str) -> None:
            calls.append("floor")
            self.value = value

        async def read(self, key: str) -> str:
            return self.value

        async def delete(self, key: str) -> None:
            pass

        async def close(self) -> None:
            pass

    async def cycle(n: int) -> tuple[float, int]:
        calls.append("cycle")
        return 0.002, 100

    figure = await time_cycles(cycle, cycles=3, warmup=1, floor=CountingFloor())
    assert calls == ["cycle", "floor"] * 4
    assert figure["median_ms"] == 2.0 and figure["cycles_per_s"] == 500.0
    assert figure["floor_median_ms"] > 0 and figure["ratio_to_floor"] > 0


async def test_listing_benchmark_counts_every_stored_run() -> None:
    from bench._listing import run_listing

    figure = await run_listing("memory://", runs=250, queries=3)
    assert figure["stored_runs"] == 250 and figure["figure"] == "list_suspended_runs"


def test_cli_prints_one_json_line_per_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cycle", "--storage", "memory://", "--cycles", "2", "--in-flight", "3"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    figure = json.loads(line)
    assert figure["figure"] == "cycle" and figure["in_flight"] == 3


def test_cli_help_lists_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for figure in (
        "cycle",
        "list",
        "clicks",
        "peers",
        "snapshot_bytes",
        "statements",
        "concurrent_cycles_per_s",
        "ratio_to_floor",
        "Pydantic AI",
    ):
        assert figure in text, figure


def test_cli_reports_a_failing_figure_as_an_error_line_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["list", "--storage", "nosuch://x", "--runs", "1"]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["figure"] == "list_suspended_runs" and "error" in json.loads(line)


def test_a_printed_line_with_an_error_field_fails_the_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines: list[dict[str, Any]] = [{"figure": "cycle", "error": "2/100 concurrent cycles failed"}]
    assert _report("cycle", lambda: lines) is False
    assert "2/100" in capsys.readouterr().out


async def test_memory_figure_reports_rss_before_and_after_more_pending_runs(
    tmp_path: Path,
) -> None:
    from bench._memory import run_memory

    figure = await run_memory(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}", small=5, large=15)
    assert figure["figure"] == "memory" and figure["pending_large"] == 15
    assert figure["rss_small_mb"] > 0 and figure["rss_large_mb"] > 0
    assert isinstance(figure["growth"], float)


def test_sweep_figure_prints_one_curve_with_its_growth_exponents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["sweep", "--sweep-sizes", "20,200"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    figure = json.loads(line)
    assert figure["figure"] == "sweep" and figure["pending"] == [20, 200]
    assert len(figure["pass_median_ms"]) == 2 and all(t > 0 for t in figure["pass_median_ms"])
    assert isinstance(figure["exponent"], float) and isinstance(figure["rss_exponent"], float)
