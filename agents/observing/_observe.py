"""``Observer``: what a host (the bot's metrics) learns about decisions and tool executions.

The runtime reports facts, never values: a decision's kind, source and how long the call waited;
a tool's name, outcome and duration. Arguments and results are not passed on, so an observer
cannot leak them into metric labels. Callbacks are synchronous and cheap; one that raises is
logged and ignored (an observer never breaks a run).

Example:
    >>> seen = []
    >>> served = agent.served(ServedParts(observers=(Observer(on_tool_executed=seen.append),)))
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

logger = logging.getLogger(__name__)

DecisionKind = Literal["approved", "declined", "resumed", "expired"]
ToolOutcome = Literal["ok", "error", "suspended", "skipped", "interrupted"]


@dataclass(frozen=True, kw_only=True)
class DecisionTaken:
    """A decision was claimed (the final one of a quorum; earlier approvals are not reported)."""

    agent_id: str
    run_id: str
    tool_call_id: str
    tool_name: str
    decision: DecisionKind
    source: str
    """Who reported it, as given to the decision (``button``, ``api``, ``expiry``...)."""
    waited_seconds: float
    """From the call's suspension to this decision."""


@dataclass(frozen=True, kw_only=True)
class ToolExecuted:
    """A local tool call ran, was skipped by a ``before_tool_call`` hook, or was found
    ``interrupted`` by recovery (its instance died mid-call and the tool is not idempotent)."""

    agent_id: str
    run_id: str
    tool_call_id: str
    tool_name: str
    outcome: ToolOutcome
    seconds: float


@dataclass(frozen=True, kw_only=True)
class Observer:
    """Callbacks the runtime calls after a decision is claimed and after a tool ran.

    A host gives them when it serves an agent (``ServedParts(observers=...)``); sub-agents
    report to their supervisor's observers.
    """

    on_decision: Callable[[DecisionTaken], None] | None = None
    on_tool_executed: Callable[[ToolExecuted], None] | None = None


E = TypeVar("E", DecisionTaken, ToolExecuted)


def notify(observers: Sequence[Observer], event: E) -> None:
    """Hand ``event`` to every observer's matching callback; a failing callback is logged."""
    for observer in observers:
        fn = observer.on_decision if isinstance(event, DecisionTaken) else observer.on_tool_executed
        if fn is None:
            continue
        try:
            fn(event)  # type: ignore[arg-type]
        except Exception:
            logger.exception("observer %r failed on %s", fn, type(event).__name__)
