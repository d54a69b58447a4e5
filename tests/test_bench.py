"""The benchmark runs and reports its figure (timings are measured in bench/, never asserted)."""

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
