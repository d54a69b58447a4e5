"""The API's one outward hook: "a decision was taken through the API".

The API package knows nothing of Slack. Whoever mounts it (``bot._serve``) passes an
``on_decision`` observer; the bot's passes one that shows the decision on its Slack card and
posts the run's continuation in the thread.

Example:
    >>> async def log_it(decision: ApiDecision) -> None:
    ...     print(decision.kind, decision.tool_call_id)
    >>> add_api_routes(web_app, agents, token, on_decision=log_it)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from agents import AgentStream

DecisionKind = Literal["approved", "declined", "resumed"]
"""What the API did with a pending tool call."""


@dataclass(frozen=True, kw_only=True)
class ApiDecision:
    """A decision taken through the API (after the claim), with the continuation it started."""

    run_id: str
    """The run the tool call belongs to."""
    tool_call_id: str
    """The decided tool call."""
    kind: DecisionKind
    """Approved, declined, or resumed with data."""
    decided_by: str
    """``decidedBy`` of the request (default ``api``)."""
    stream: AgentStream
    """The run going on after the decision."""
    reason: str | None = None
    """The decline reason, if any."""
    args: dict[str, Any] | None = None
    """The approved (possibly edited) arguments, if given."""


class DecisionObserver(Protocol):
    """Told of every decision the API takes; a failure is logged, the answer still goes out."""

    async def __call__(self, decision: ApiDecision, /) -> None: ...
