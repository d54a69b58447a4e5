"""``Observer``: what a host (the bot's metrics) learns about decisions, tool executions and
escalation steps.

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
from typing import Any, Literal, TypeVar

logger = logging.getLogger(__name__)

DecisionKind = Literal["approved", "declined", "resumed", "expired"]
DecisionOutcome = Literal["approved", "declined", "resumed", "expired", "withdrawn", "granted"]
"""What a decision came to, as metrics label it: a ``declined`` call its requester took back is
``withdrawn``, an ``approved`` one a standing grant approved is ``granted``."""
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
    outcome: DecisionOutcome | None = None
    """What the decision came to when it says more than ``decision`` (``withdrawn``,
    ``granted``); None: ``decision`` itself (``DecisionTaken.came_to``)."""

    @property
    def came_to(self) -> DecisionOutcome:
        """``outcome``, else ``decision``: the ``outcome`` label of the decision's wait."""
        return self.outcome or self.decision


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
class CallEscalated:
    """A pending call went through one escalation step (SPEC 15; once across processes)."""

    agent_id: str
    run_id: str
    tool_call_id: str
    tool_name: str
    step: int
    """Which step of its rule's ``escalate`` (1 for the first)."""


@dataclass(frozen=True, kw_only=True)
class Observer:
    """Callbacks the runtime calls after a decision is claimed and after a tool ran.

    A host gives them when it serves an agent (``ServedParts(observers=...)``); sub-agents
    report to their supervisor's observers.
    """

    on_decision: Callable[[DecisionTaken], None] | None = None
    on_tool_executed: Callable[[ToolExecuted], None] | None = None
    on_escalation: Callable[[CallEscalated], None] | None = None


E = TypeVar("E", DecisionTaken, ToolExecuted, CallEscalated)


def notify(observers: Sequence[Observer], event: E) -> None:
    """Hand ``event`` to every observer's matching callback; a failing callback is logged."""
    for observer in observers:
        fn = _callback(observer, event)
        if fn is None:
            continue
        try:
            fn(event)
        except Exception:
            logger.exception("observer %r failed on %s", fn, type(event).__name__)


def _callback(
    observer: Observer, event: DecisionTaken | ToolExecuted | CallEscalated
) -> Callable[[Any], None] | None:
    """The callback of ``observer`` for events like ``event`` (None: it has none)."""
    if isinstance(event, DecisionTaken):
        return observer.on_decision
    if isinstance(event, CallEscalated):
        return observer.on_escalation
    return observer.on_tool_executed
