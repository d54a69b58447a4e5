"""``/api`` routes of standing grants (SPEC 15): list an agent's grants, revoke one.

A grant is created by approving with one (``POST .../approve-tool-call`` with ``grant``).
Who revokes is authenticated like who decides (``bot.api._identity``): a per-person token
revokes as its user; the service token as no person (or as its ``revokedBy`` with
``API_TOKEN_ACTS_FOR_USERS=true``). Only the grantor or an approver of the grant's rule may
(403 ``GRANT_NOT_ALLOWED`` otherwise, also for an unknown grant).
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

import bot.api._errors as api_errors
from agents import Agent
from bot.api._grant_schemas import GrantOut, GrantsOut, GrantsQuery, RevokeGrantRequest
from bot.api._input import Problem, json_body, parse
from bot.api._openapi import GRANTS, REVOKE_GRANT

ROUTE_PATTERNS = (
    (r"^agents/[^/]+/grants$", "GET"),
    (r"^agents/[^/]+/revoke-grant$", "POST"),
)
"""The routes' tails under ``/api`` and their methods (for 405 answers)."""

AgentOf = Callable[[web.Request], Agent]
RevokerOf = Callable[[web.Request, str | None, str], str | None]


def add_grant_routes(api: web.Application, agent_of: AgentOf, revoker_of: RevokerOf) -> None:
    """Mount the grant routes on the ``/api`` sub-application."""

    async def list_grants(request: web.Request) -> web.Response:
        agent = agent_of(request)
        query = parse(GrantsQuery, dict(request.query))
        grants = await agent.list_grants(
            thread_id=query.thread_id, resource_id=query.resource_id, granted_by=query.granted_by
        )
        out = GrantsOut(grants=[GrantOut.of(g) for g in grants])
        return web.json_response(text=out.model_dump_json(by_alias=True))

    async def revoke(request: web.Request) -> web.Response:
        agent = agent_of(request)
        body = parse(RevokeGrantRequest, await json_body(request))
        if await agent.storage.get_grant(body.grant_id) is None:
            raise Problem(
                404,
                api_errors.GRANT_NOT_FOUND,
                f"there is no grant {body.grant_id!r}; list them with GET .../grants",
                grantId=body.grant_id,
            )
        revoker = revoker_of(request, body.revoked_by, body.grant_id)
        grant = await agent.revoke_grant(body.grant_id, revoked_by=revoker)
        return web.json_response(text=GrantOut.of(grant).model_dump_json(by_alias=True))

    api.router.add_get(GRANTS, list_grants)
    api.router.add_post(REVOKE_GRANT, revoke)
