"""Errors of the bot (the wiring and every part under ``bot/``), and what the bot answers the
runtime's refusals with.

BotError
├── BotConfigError   the environment cannot start the bot (every problem listed at once)
└── AgentLoadError   BOT_AGENT names no importable Agent (bot._agent_loader)

``answer_of(error)`` is the ONE mapping from a runtime refusal (``agents.errors``) to the bot's
answer, on every surface: its HTTP status (``bot.api._errors``) and its ``AnswerKind`` (what a
person in Slack is told, ``bot.slack.deciding._told``). Ordered by specificity:
``ApprovalExpired`` is an ``AlreadyDecided`` and is met first.

Example:
    >>> answer_of(DuplicateApproval("r", "c1", approver="U2", approved_by=["U2"], needed=2))
    Answer(status=409, kind='duplicate')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agents import errors as e
from agents.errors import AgentError


class BotError(Exception):
    """Root of every error raised by the ``bot`` package."""


class BotConfigError(BotError):
    """The configuration is invalid; ``problems`` lists every problem with how to fix it."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"countersign cannot start, fix the configuration:\n{lines}")


AnswerKind = Literal[
    "not-allowed",
    "grant-refused",
    "no-run",
    "expired",
    "cannot-extend",
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
    (e.CannotExtend, Answer(409, "cannot-extend")),
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
