"""What the HTTP API client's decision calls answer (``bot.client.Decision``,
``bot.client.ManyDecisions``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agents import PendingToolCall


@dataclass(frozen=True, kw_only=True)
class Decision:
    """What a decision call answered: it was claimed; with ``wait=True``, the run's result."""

    run_id: str
    """The run the decision belongs to."""
    tool_call_id: str
    """The call that was decided."""
    status: Literal["accepted"] = "accepted"
    """Always ``accepted``: the decision was claimed (errors are raised instead)."""
    text: str | None = None
    """``wait=True``: the answer's text once the run finished or suspended again."""
    finish_reason: Literal["stop", "suspended", "length", "error", "abandoned"] | None = None
    """``wait=True``: how the run stopped."""
    pending: list[PendingToolCall] | None = field(default=None)
    """``wait=True``: calls still (or newly) waiting for a person."""
    error: str | None = None
    """``wait=True`` and ``finish_reason == "error"``: what went wrong."""


@dataclass(frozen=True, kw_only=True)
class ManyDecisions:
    """What ``decide_many`` answered: every decision was claimed; with ``wait=True``, the
    run's result."""

    run_id: str
    """The run the decisions belong to."""
    tool_call_ids: list[str]
    """The calls decided, in the order given."""
    status: Literal["accepted"] = "accepted"
    """Always ``accepted``: every decision was claimed (a refusal is raised instead)."""
    text: str | None = None
    """``wait=True``: the answer's text once the run finished or suspended again."""
    finish_reason: Literal["stop", "suspended", "length", "error", "abandoned"] | None = None
    """``wait=True``: how the run stopped."""
    pending: list[PendingToolCall] | None = field(default=None)
    """``wait=True``: calls still (or newly) waiting for a person."""
    error: str | None = None
    """``wait=True`` and ``finish_reason == "error"``: what went wrong."""
