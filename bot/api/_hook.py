"""The API's outward hooks: "a decision was taken through the API", and "a call was kept
decidable for longer through the API" (``ExtensionObserver``).

The API package knows nothing of Slack. Whoever mounts it (``bot._serve``) passes an
``on_decision`` observer; the bot's passes one that shows the decision on its Slack card and
posts the run's continuation in the thread. What it is told is the runtime's own value,
``agents.TakenDecision`` (the ``DecisionRequest`` the API claimed, the decision and the run's
stream), so the API and the Slack edge share a type without importing each other.

Example:
    >>> async def log_it(taken: TakenDecision) -> None:
    ...     print(taken.decision.kind, taken.request.tool_call_id)
    >>> add_api_routes(web_app, agents, access, on_decision=log_it)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Protocol

from agents import PendingToolCall, TakenDecision


class DecisionObserver(Protocol):
    """Told of every decision the API takes; a failure is logged, the answer still goes out."""

    async def __call__(self, taken: TakenDecision, /) -> None: ...


class ExtensionObserver(Protocol):
    """Told of every call the API kept decidable for longer (``extend-tool-call``), as it now
    stands; the bot's redraws its Slack card with the new expiry. A failure is logged, the
    answer still goes out."""

    async def __call__(self, agent_id: str, run_id: str, call: PendingToolCall, /) -> None: ...
