"""One mapping from the runtime's refusals to the bot's answers: the HTTP API's status and the
sentence a person is told in Slack both come from ``bot._errors.answer_of``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents import errors
from agents.errors import AgentError
from bot._errors import answer_of
from bot.api._errors import status_of
from bot.slack.deciding._told import told

NOT_REFUSALS = {"AgentError", "LeaseLost", "ModelError", "RunnerClosed", "ScriptExhausted"}
"""Runtime errors that are no answer to a decision (a run's own failures)."""

NOW = datetime(2026, 12, 1, tzinfo=UTC)
SAMPLES: list[AgentError] = [
    errors.NotAllowedToDecide("r", "c1", decided_by="U2", reason="no", rule="not-approver"),
    errors.GrantNotAllowed("the rule allows none", tool_call_id="c1"),
    errors.SnapshotNotFound("r"),
    errors.ApprovalExpired("r", "c1", decided_at=NOW),
    errors.AlreadyDecided("r", "c1", decision="approved", decided_by="U3", decided_at=NOW),
    errors.ToolCallNotSuspended("r", "c1"),
    errors.AmbiguousToolCall("r", ["c1", "c2"]),
    errors.FingerprintMismatch("r", "c1", "a" * 64, "b" * 64),
    errors.DuplicateApproval("r", "c1", approver="U2", approved_by=["U2"], needed=2),
    errors.ToolChanged("r", "c1", shown_digest="a", current_digest="b"),
    errors.InvalidResumeData("c1", []),
    errors.InvalidToolArgs("c1", []),
    errors.AgentConfigError("pass decided_by="),
    errors.CannotExtend("r", "c1", reason="the rule allows no more time"),
]


def test_every_refusal_the_runtime_raises_has_an_answer() -> None:
    refusals = {
        name
        for name in dir(errors)
        if isinstance(getattr(errors, name), type)
        and issubclass(getattr(errors, name), AgentError)
        and name not in NOT_REFUSALS
    }
    assert {type(e).__name__ for e in SAMPLES} == refusals


@pytest.mark.parametrize("error", SAMPLES, ids=lambda e: type(e).__name__)
def test_the_api_and_slack_answer_a_refusal_from_the_same_mapping(error: AgentError) -> None:
    answer = answer_of(error)
    assert answer.kind != "failed"
    assert status_of(error) == answer.status
    assert told(error).strip()  # a sentence for the person, whatever the kind


def test_an_expired_call_is_answered_as_expired_not_as_decided() -> None:
    expired = errors.ApprovalExpired("r", "c1", decided_at=NOW)
    assert answer_of(expired).kind == "expired" and "xpired" in told(expired)
