"""The API's one outward hook: "a decision was taken through the API".

The API package knows nothing of Slack. Whoever mounts it (``bot._serve``) passes an
``on_decision`` observer; the bot's passes one that shows the decision on its Slack card and
posts the run's continuation in the thread.

Example:
    >>> async def log_it(decision: ApiDecision) -> None:
    ...     print(decision.decision.kind, decision.tool_call_id)
    >>> add_api_routes(web_app, agents, token, on_decision=log_it)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agents import AgentStream, Decision


@dataclass(frozen=True, kw_only=True)
class ApiDecision:
    """A decision taken through the API (after the claim), with the continuation it started."""

    run_id: str
    """The run the tool call belongs to."""
    tool_call_id: str
    """The decided tool call."""
    decision: Decision
    """What was decided (``Approve`` with its edited ``args``, ``Decline`` with its ``reason``,
    ``Resume`` with its data): the value the API passed to ``Agent.decide``."""
    decided_by: str
    """``decidedBy`` of the request (default ``api``)."""
    stream: AgentStream
    """The run going on after the decision."""


class DecisionObserver(Protocol):
    """Told of every decision the API takes; a failure is logged, the answer still goes out."""

    async def __call__(self, decision: ApiDecision, /) -> None: ...
