"""Decisions taken outside Slack (the HTTP API) shown where the request was: the card is
updated in place and the run's continuation is posted in its thread, like a button click.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from agents import AgentStream
from bot.slack._blocks import Decision
from bot.slack._decisions import update_card
from bot.slack._render import SlackThread, post_run, reporting_failures
from bot.slack._services import Services
from storage import utcnow

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class OutsideDecision:
    """A decision made through the API, with the continuation it started."""

    run_id: str
    tool_call_id: str
    kind: Literal["approved", "declined", "resumed"]
    decided_by: str
    stream: AgentStream
    reason: str | None = None
    args: dict[str, Any] | None = None


async def publish(services: Services, decision: OutsideDecision) -> None:
    """Queue the Slack side of ``decision`` on the bot's runner (returns at once)."""
    services.runner.submit(_publish(services, decision), name=f"publish-{decision.run_id}")


async def _publish(services: Services, decision: OutsideDecision) -> None:
    card = await services.cards.find(decision.run_id, decision.tool_call_id)
    if card is None:
        return  # not a Slack request: the run goes on by itself
    thread = SlackThread(
        team=card.team,
        channel=card.channel,
        thread_ts=card.thread_ts,
        requester=card.view.requester,
    )
    async with services.locks.hold(thread.thread_id), reporting_failures(services, thread):
        if decision.kind != "resumed":
            shown = Decision(
                kind=decision.kind,
                by=decision.decided_by,
                at=utcnow(),
                reason=decision.reason,
                approved_args=decision.args,
            )
            await update_card(services, card.channel, card.ts, card.view, shown)
        await post_run(services, decision.stream, thread)


async def post_recovered(services: Services, stream: AgentStream) -> None:
    """Post in its Slack thread how a run recovered after a crash goes on (if it has one)."""
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-resumed":
            decision = OutsideDecision(
                run_id=stream.run_id,
                tool_call_id=chunk.tool_call_id,
                kind="resumed",
                decided_by="system",
                stream=stream,
            )
            await _publish(services, decision)
            return
    await stream.result()
