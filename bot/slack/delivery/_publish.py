"""Decisions taken outside Slack shown where the request was, like a button click: a decision
taken through the HTTP API (``publish``) and a run recovered after a crash (``post_recovered``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from agents import AgentStream, Decision
from bot.slack._services import Services
from bot.slack.delivery._shown import show_decided
from storage import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class OutsideDecision:
    """A decision made through the API, with the continuation it started."""

    run_id: str
    """The run the decided call belongs to."""
    tool_call_id: str
    """The decided call."""
    decision: Decision
    """What was decided (the runtime's value, as the API passed it to ``Agent.decide``)."""
    decided_by: str
    """Who decided (the API's ``decidedBy``)."""
    stream: AgentStream
    """The run going on after the decision."""


async def publish(services: Services, decision: OutsideDecision) -> None:
    """Queue the Slack side of ``decision`` on the bot's runner (returns at once)."""
    services.runner.submit(
        show_decided(
            services,
            decision.decision,
            run_id=decision.run_id,
            tool_call_id=decision.tool_call_id,
            by=decision.decided_by,
            at=utcnow(),
            stream=decision.stream,
        ),
        name=f"publish-{decision.run_id}",
    )


async def post_recovered(services: Services, stream: AgentStream) -> None:
    """Post in its Slack thread how a run recovered after a crash goes on (if it has one).

    A call whose outcome is unknown (``interrupted``: not idempotent, so not run again) has its
    card say so ("⚠️ Interrupted"); a retried one keeps its card as it was.
    """
    resumed: str | None = None
    interrupted = False
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-resumed" and resumed is None:
            resumed = chunk.tool_call_id
        elif chunk.type == "tool-result" and resumed is not None:
            result = chunk.result
            interrupted = isinstance(result, dict) and result.get("status") == "interrupted"
            break
        elif chunk.type in ("tool-output-denied", "finish") and resumed is not None:
            break
    if resumed is None:
        await stream.result()
        return
    await show_decided(
        services,
        None,  # decided before the crash
        run_id=stream.run_id,
        tool_call_id=resumed,
        by=None,
        at=utcnow(),
        stream=stream,
        interrupted=interrupted,
    )
