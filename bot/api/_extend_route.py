"""``POST /api/agents/{agent_id}/extend-tool-call`` (SPEC 12 "Extend"): keep a pending approval
decidable for longer, as ``Agent.extend_tool_call``.

Who extends is authenticated like who decides (``bot.api._identity``): a per-person token
extends as its user; the service token as no person (or as its ``extendedBy`` with
``API_TOKEN_ACTS_FOR_USERS=true``). Whoever may approve the call may extend it (403
``APPROVAL_NOT_ALLOWED`` otherwise); 409 for a call decided or expired, or one its rule allows
no (more) time (``APPROVAL_CANNOT_EXTEND``). The answer is the call as it now stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web

from agents import Agent
from bot.api._guard import CALLER
from bot.api._hook import ExtensionObserver
from bot.api._input import json_body, parse
from bot.api._openapi import EXTEND
from bot.api._schemas import ExtendRequest

logger = logging.getLogger(__name__)

ROUTE_PATTERN = (r"^agents/[^/]+/extend-tool-call$", "POST")
"""The route's tail under ``/api`` and its method (for 405 answers)."""
SOURCE = "api"
"""The audit ``source`` of an extend through the API."""

AgentOf = Callable[[web.Request], Agent]


def add_extend_route(
    api: web.Application, agent_of: AgentOf, on_extended: ExtensionObserver | None = None
) -> None:
    """Mount the extend route on the ``/api`` sub-application; ``on_extended`` is told of
    each call extended (the bot redraws its card)."""

    async def extend(request: web.Request) -> web.Response:
        agent = agent_of(request)
        body = parse(ExtendRequest, await json_body(request))
        by = request[CALLER].decider(body.extended_by, body.run_id, body.tool_call_id)
        call = await agent.extend_tool_call(
            run_id=body.run_id, tool_call_id=body.tool_call_id, by=by, source=SOURCE
        )
        logger.info(
            "api: extended tool call %s of run %s (agent %s) by %s",
            body.tool_call_id,
            body.run_id,
            agent.id,
            by or SOURCE,
        )
        if on_extended is not None:
            try:
                await on_extended(agent.id, body.run_id, call)
            except Exception:  # the extension stands; its card is redrawn by the next update
                logger.exception("api: could not show the extension of %s", body.tool_call_id)
        return web.json_response(text=call.model_dump_json(by_alias=True))

    api.router.add_post(EXTEND, extend)
