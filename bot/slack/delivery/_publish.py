"""Decisions taken outside Slack shown where the request was, like a button click: a decision
taken through the HTTP API (``publish``) and a run recovered after a crash (``post_recovered``);
a call it kept decidable for longer is ``bot.slack.delivery._extended.show_extension``.
"""

from __future__ import annotations

import logging

from agents import AgentStream, TakenDecision
from bot.slack._services import Services
from bot.slack.delivery._shown import show_decided, show_many_decided
from storage import utcnow

logger = logging.getLogger(__name__)


async def publish(services: Services, taken: TakenDecision) -> None:
    """Queue the Slack side of ``taken`` on the bot's runner (returns at once). A decision
    without a named person shows how it came (``api``)."""
    request = taken.request
    if taken.batch:  # decide_many: every call shown, the run posted once
        services.runner.submit(
            show_many_decided(
                services,
                taken.batch,
                run_id=request.run_id,
                by=request.decided_by or request.source,
                at=utcnow(),
                stream=taken.stream,
            ),
            name=f"publish-{request.run_id}",
        )
        return
    if request.tool_call_id is None:  # no card names it: the run goes on by itself
        return
    services.runner.submit(
        show_decided(
            services,
            taken.decision,
            run_id=request.run_id,
            tool_call_id=request.tool_call_id,
            by=request.decided_by or request.source,
            at=utcnow(),
            stream=taken.stream,
        ),
        name=f"publish-{request.run_id}",
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
