"""One mapping from the runtime's refusals to what the bot answers, on every surface.

``answer_of(error)`` says what a refused decision is, once: its HTTP status (the API's answer,
``bot.api._errors``) and its ``AnswerKind`` (what a person in Slack is told,
``bot.slack.deciding._told``). Ordered
by specificity: ``ApprovalExpired`` is an ``AlreadyDecided`` and is met first.

Example:
    >>> answer_of(DuplicateApproval("r", "c1", approver="U2", approved_by=["U2"], needed=2))
    Answer(status=409, kind='duplicate')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents import errors as e
from agents.errors import AgentError

AnswerKind = Literal[
    "not-allowed",
    "grant-refused",
    "no-run",
    "expired",
    "already-decided",
    "not-pending",
    "changed-args",
    "duplicate",
    "tool-changed",
    "invalid-data",
    "bad-request",
    "failed",
]
"""What kind of refusal a person is told about."""


@dataclass(frozen=True)
class Answer:
    """How the bot answers one refusal."""

    status: int
    """The HTTP status the API answers with."""
    kind: AnswerKind
    """What a person is told (a Slack ephemeral says it in words)."""


_ANSWERS: tuple[tuple[type[AgentError], Answer], ...] = (
    (e.NotAllowedToDecide, Answer(403, "not-allowed")),
    (e.GrantNotAllowed, Answer(403, "grant-refused")),
    (e.SnapshotNotFound, Answer(404, "no-run")),
    (e.ApprovalExpired, Answer(409, "expired")),
    (e.AlreadyDecided, Answer(409, "already-decided")),
    (e.ToolCallNotSuspended, Answer(409, "not-pending")),
    (e.AmbiguousToolCall, Answer(409, "not-pending")),
    (e.FingerprintMismatch, Answer(409, "changed-args")),
    (e.DuplicateApproval, Answer(409, "duplicate")),
    (e.ToolChanged, Answer(409, "tool-changed")),
    (e.InvalidResumeData, Answer(422, "invalid-data")),
    (e.InvalidToolArgs, Answer(422, "invalid-data")),
    (e.AgentConfigError, Answer(400, "bad-request")),
)
_FAILED = Answer(500, "failed")


def answer_of(error: AgentError) -> Answer:
    """How the bot answers ``error`` (500 ``failed`` for a runtime error it has no answer for)."""
    for kind, answer in _ANSWERS:
        if isinstance(error, kind):
            return answer
    return _FAILED
