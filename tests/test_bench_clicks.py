"""``python -m bench clicks``: the real bot acks concurrent clicks and each card runs once."""

import pytest

from bench._clicks import run_clicks


@pytest.mark.processes
async def test_concurrent_clicks_are_all_acked_and_each_card_runs_its_tool_once() -> None:
    figure = await run_clicks("memory://", cards=2, per_card=3, concurrency=6, settle_s=60)
    assert figure["figure"] == "clicks"
    assert figure["clicks"] == figure["acked_200"] == 6
    assert figure["losers_told"] == 4
    assert figure["each_card_ran_once"] is True
    assert set(figure) >= {"p50_ms", "p99_ms", "concurrency"}
