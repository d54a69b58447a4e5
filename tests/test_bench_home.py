"""``python -m bench home``: the App Home tab with many approvals waiting, against the real bot
(timings are measured in bench/, never asserted; the shape and the Slack calls are)."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main

FIELDS = {
    "figure",
    "storage",
    "pending",
    "viewers",
    "onlookers",
    "publishes",
    "rows",
    "publish_median_ms",
    "publish_max_ms",
    "publish_nothing_ms",
    "slack_calls_first_publish",
    "slack_calls_per_publish",
    "slack_calls_per_decision",
    "home_publishes_per_decision",
    "permalink_calls",
    "fill_s",
}


@pytest.mark.processes
def test_the_home_figure_is_one_json_line_and_a_decision_publishes_only_for_approvers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["home", "--pending", "30", "--viewers", "2", "--onlookers", "5"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    figure = json.loads(line)
    assert set(figure) == FIELDS and figure["figure"] == "home"
    assert figure["pending"] == 30 and figure["viewers"] == 2 and figure["publishes"] == 6
    assert figure["rows"] == 24  # as many as the view shows, of the 30 waiting
    assert figure["publish_median_ms"] > 0 and figure["publish_max_ms"] > 0
    assert figure["publish_nothing_ms"] > 0
    assert figure["slack_calls_per_publish"] == 1  # views.publish, for 24 rows
    assert figure["slack_calls_first_publish"] <= 3  # + auth.test: bolt's, the workspace URL
    assert figure["permalink_calls"] == 0
    # a decision: the card's update, the answer in its thread, one views.publish per approver
    # with Home open (the decider, the other one), none for the 5 who may decide nothing
    assert figure["onlookers"] == 5 and figure["home_publishes_per_decision"] == 2
    assert 2 + 2 <= figure["slack_calls_per_decision"] <= 2 + 2 + 4
