"""``/api``: list and decide pending tool calls over HTTP (SPEC 7), for approval UIs outside Slack.

Mounted on the bot's aiohttp app as a sub-application, only when an API token is configured
(``API_TOKEN``, ``API_TOKENS``). Every route needs ``Authorization: Bearer <token>``, which
says who decides (``bot.api._identity``): a per-person token decides as its user, the service
token as no person (or as its ``decidedBy`` with ``API_TOKEN_ACTS_FOR_USERS=true``). Decisions
are claimed before the answer goes out (single-use, like a Slack click) and recorded in the
audit log with source ``api`` and that person as actor. Who may decide is the agent's decision
policy, inside the claim (403 ``APPROVAL_NOT_ALLOWED`` naming the rule: ``self-approval``,
``not-approver``, ``needs-person`` for no person where the call needs one). The run then
continues in the agent's own background tasks. Errors are JSON ``{"code", "message", ...}``;
bad input is always a 4xx (see ``bot.api._errors`` for the status of each code).

Example:
    >>> app = web.Application()
    >>> add_api_routes(app, {agent.id: agent}, ApiAccess.of(settings))  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping

from aiohttp import web
from pydantic import BaseModel

import bot.api._errors as api_errors
from agents import (
    Agent,
    AgentStream,
    Approve,
    Decision,
    DecisionRequest,
    Decline,
    Resume,
    TakenDecision,
)
from agents.errors import ToolChanged
from bot.api._extend_route import ROUTE_PATTERN as EXTEND_ROUTE
from bot.api._extend_route import add_extend_route
from bot.api._gate import Gate, add_gate_route
from bot.api._grant_routes import ROUTE_PATTERNS as GRANT_ROUTES
from bot.api._grant_routes import add_grant_routes
from bot.api._guard import CALLER, guard_of
from bot.api._hook import DecisionObserver, ExtensionObserver
from bot.api._identity import ApiAccess
from bot.api._input import Problem, json_body, parse
from bot.api._openapi import (
    API_PREFIX,
    APPROVE,
    DECIDE_MANY,
    DECLINE,
    OPENAPI,
    PENDING_CALL,
    RESUME,
    SUSPENDED_RUNS,
    openapi_document,
)
from bot.api._schemas import (
    DEFAULT_PER_PAGE,
    ApproveRequest,
    DecideManyOut,
    DecideManyRequest,
    DecisionOut,
    DecisionQuery,
    DeclineRequest,
    ResumeRequest,
    SuspendedRunsPageOut,
    SuspendedRunsQuery,
)

logger = logging.getLogger(__name__)

AGENTS = web.AppKey("countersign.api.agents", dict[str, Agent])
"""The agents the API serves, by id (in the ``/api`` sub-application)."""
OBSERVER: web.AppKey[DecisionObserver | None] = web.AppKey("countersign.api.observer")
"""Told of every decision the API takes (after the claim)."""
DRAIN_SECONDS = 30.0
"""How long shutdown waits for runs that API decisions continued."""
API_SOURCE = "api"
"""The audit ``source`` (and default actor) of decisions taken through the API."""

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def add_api_routes(
    app: web.Application,
    agents: Mapping[str, Agent],
    access: ApiAccess | None,
    *,
    on_decision: DecisionObserver | None = None,
    on_extended: ExtensionObserver | None = None,
    gate: Gate | None = None,
) -> None:
    """Mount ``/api`` on ``app`` serving ``agents`` (by id); no ``access`` → nothing is mounted.

    ``access`` holds the tokens accepted and who each decides as (``ApiAccess.of(settings)``).
    ``on_decision`` is told of every decision taken (the bot passes one that shows it in
    Slack; see ``bot.api._hook``), ``on_extended`` of every call kept decidable for longer
    (the bot redraws its card). ``gate`` answers ``POST /api/gate`` (the bot passes its
    gateway when ``GATEWAY`` is on; see ``bot.api._gate``).

    Example:
        >>> access = ApiAccess.service("s3cret")
        >>> add_api_routes(web_app, {"ops": ops_agent}, access)  # doctest: +SKIP
    """
    if access is None:
        logger.info("neither API_TOKEN nor API_TOKENS is set: the HTTP API (/api) is off")
        return
    api = web.Application(middlewares=[guard_of(access)])
    api[AGENTS] = dict(agents)
    api[OBSERVER] = on_decision
    api.router.add_get(SUSPENDED_RUNS, _list_suspended_runs)
    api.router.add_get(PENDING_CALL, _pending_call)
    api.router.add_post(APPROVE, _approve)
    api.router.add_post(DECLINE, _decline)
    api.router.add_post(RESUME, _resume)
    api.router.add_post(DECIDE_MANY, _decide_many)
    add_grant_routes(api, _agent, _revoker)
    add_extend_route(api, _agent, on_extended)
    add_gate_route(api, gate)
    api.router.add_get(OPENAPI, _openapi)
    api.router.add_route("*", "/{tail:.*}", _fallback)
    api.on_shutdown.append(_drain_agents)
    app.add_subapp(API_PREFIX, api)


# -- handlers ------------------------------------------------------------------------------
async def _list_suspended_runs(request: web.Request) -> web.Response:
    agent = _agent(request)
    query = parse(SuspendedRunsQuery, dict(request.query))
    page, per_page = query.page, query.per_page
    if page is not None and per_page is None:
        per_page = DEFAULT_PER_PAGE
    elif per_page is not None and page is None:
        page = 0
    listing = await agent.list_suspended_runs(
        thread_id=query.thread_id, resource_id=query.resource_id, page=page, per_page=per_page
    )
    return _ok(SuspendedRunsPageOut.of(listing))


async def _pending_call(request: web.Request) -> web.Response:
    agent = _agent(request)
    run_id, tool_call_id = request.match_info["run_id"], request.match_info["tool_call_id"]
    call = await agent.pending_call(run_id=run_id, tool_call_id=tool_call_id)
    if call is None:
        raise Problem(
            404,
            api_errors.PENDING_CALL_NOT_FOUND,
            f"tool call {tool_call_id!r} of run {run_id!r} is not pending (decided, or never "
            "was); list what waits with GET .../suspended-runs",
            runId=run_id,
            toolCallId=tool_call_id,
        )
    return _ok(call)


async def _approve(request: web.Request) -> web.Response:
    agent = _agent(request)
    body = parse(ApproveRequest, await json_body(request))
    grant = None if body.grant is None else body.grant.to_runtime()
    decision = Approve(args=body.args, grant=grant)
    return await _decide(request, agent, body, decision, body.fingerprint)


async def _decline(request: web.Request) -> web.Response:
    agent = _agent(request)
    body = parse(DeclineRequest, await json_body(request))
    decision = Decline(reason=body.reason, withdrawn=body.withdrawn)
    return await _decide(request, agent, body, decision, body.fingerprint)


async def _resume(request: web.Request) -> web.Response:
    agent = _agent(request)
    body = parse(ResumeRequest, await json_body(request))
    return await _decide(request, agent, body, Resume(data=body.resume_data), None)


async def _decide(
    request: web.Request,
    agent: Agent,
    body: ApproveRequest | DeclineRequest | ResumeRequest,
    decision: Decision,
    fingerprint: str | None,
) -> web.Response:
    """Claim ``decision`` (single-use) as the caller's person, tell the observer (Slack),
    answer (waiting when asked)."""
    caller = request[CALLER]
    decider = caller.decider(body.decided_by, body.run_id, body.tool_call_id)
    if body.decided_by is not None and decider is None:
        logger.info(
            "api: decidedBy of a service-token request is not the decider (no person decides; "
            "set API_TOKEN_ACTS_FOR_USERS=true if the service signs its users in)"
        )
    asked = DecisionRequest(
        run_id=body.run_id,
        tool_call_id=body.tool_call_id,
        fingerprint=fingerprint,
        decided_by=decider,  # None: no person (the service token); the policy says if it may
        source=API_SOURCE,
    )
    try:
        stream = await agent.decide_request(asked, decision)
    except ToolChanged as exc:
        await _presented_again(request, exc, asked, decision)
        raise
    wait = parse(DecisionQuery, dict(request.query)).wait
    logger.info(
        "api: %s tool call %s of run %s (agent %s) by %s",
        decision.kind,
        body.tool_call_id,
        body.run_id,
        agent.id,
        decider or API_SOURCE,
    )
    await _observe(request, TakenDecision(request=asked, decision=decision, stream=stream))
    return await _accepted(stream, body.tool_call_id, wait)


async def _decide_many(request: web.Request) -> web.Response:
    """Claim every decision of the body in one transaction (``Agent.decide_many``), as the
    caller's person; tell the observer once, with the whole batch."""
    agent = _agent(request)
    body = parse(DecideManyRequest, await json_body(request))
    ids = [d.tool_call_id for d in body.decisions]
    if len(set(ids)) != len(ids):
        raise Problem(  # 422: valid by the schema, which cannot say "unique by toolCallId"
            422, api_errors.INVALID_REQUEST, "name each toolCallId once in decisions"
        )
    decider = request[CALLER].decider(body.decided_by, body.run_id, ids[0])
    decisions: dict[str, Approve | Decline] = {
        d.tool_call_id: Approve() if d.decision == "approve" else Decline(reason=d.reason)
        for d in body.decisions
    }
    try:
        stream = await agent.decide_many(
            run_id=body.run_id,
            decisions=decisions,
            decided_by=decider,
            fingerprints={d.tool_call_id: d.fingerprint for d in body.decisions if d.fingerprint},
            source=API_SOURCE,
        )
    except ToolChanged as exc:
        asked = DecisionRequest(
            run_id=body.run_id, tool_call_id=exc.tool_call_id, decided_by=decider, source=API_SOURCE
        )
        await _presented_again(request, exc, asked, Approve())
        raise
    logger.info("api: decided %d calls of run %s (agent %s)", len(ids), body.run_id, agent.id)
    asked = DecisionRequest(
        run_id=body.run_id, tool_call_id=ids[0], decided_by=decider, source=API_SOURCE
    )
    first = decisions[ids[0]]
    await _observe(
        request, TakenDecision(request=asked, decision=first, stream=stream, batch=decisions)
    )
    wait = parse(DecisionQuery, dict(request.query)).wait
    result = await stream.result() if wait else None
    out = DecideManyOut.of(body.run_id, ids, result).model_dump(mode="json", by_alias=True)
    return web.json_response({k: v for k, v in out.items() if v is not None})


async def _presented_again(
    request: web.Request, exc: ToolChanged, asked: DecisionRequest, decision: Decision
) -> None:
    """A call presented again with its tool's new definition: the Slack side posts its card."""
    if exc.presented_again and isinstance(exc.stream, AgentStream):
        await _observe(request, TakenDecision(request=asked, decision=decision, stream=exc.stream))


async def _observe(request: web.Request, taken: TakenDecision) -> None:
    observer = request.app[OBSERVER]
    if observer is not None:
        try:
            await observer(taken)
        except Exception:
            logger.exception("api: could not report decision on run %s", taken.request.run_id)


async def _openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())


async def _fallback(request: web.Request) -> web.Response:
    allowed = _allowed_methods(request.match_info.get("tail", ""))
    if allowed:
        raise Problem(
            405, api_errors.METHOD_NOT_ALLOWED, f"use {' or '.join(sorted(allowed))} on this path"
        )
    raise Problem(
        404, api_errors.NOT_FOUND, f"no API route {request.path!r}; see /api/openapi.json"
    )


async def _drain_agents(app: web.Application) -> None:
    """On shutdown, let runs continued by API decisions finish (bounded, like the runner)."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            for agent in app[AGENTS].values():
                await agent.drain()
    except TimeoutError:
        logger.warning("api: runs still going after %ss at shutdown; leaving them", DRAIN_SECONDS)


# -- helpers -------------------------------------------------------------------------------
def _revoker(request: web.Request, revoked_by: str | None, grant_id: str) -> str | None:
    """Who revokes, as the token says (like ``decidedBy``)."""
    return request[CALLER].decider(revoked_by, "", grant_id)


def _agent(request: web.Request) -> Agent:
    agent_id = request.match_info["agent_id"]
    served = request.app[AGENTS]
    agent = served.get(agent_id)
    if agent is None:
        names = ", ".join(sorted(served))
        raise Problem(
            404,
            api_errors.AGENT_NOT_FOUND,
            f"no agent {agent_id!r} is served here; served: {names}",
            agentId=agent_id,
        )
    return agent


async def _accepted(stream: AgentStream, tool_call_id: str, wait: bool) -> web.Response:
    result = await stream.result() if wait else None
    body = DecisionOut.of(stream.run_id, tool_call_id, result).model_dump(
        mode="json", by_alias=True
    )
    return web.json_response({k: v for k, v in body.items() if v is not None})


def _ok(model: BaseModel) -> web.Response:
    return web.json_response(text=model.model_dump_json(by_alias=True))


_ROUTES = [
    (re.compile(r"^agents/[^/]+/suspended-runs$"), "GET"),
    (re.compile(r"^agents/[^/]+/pending-calls/[^/]+/[^/]+$"), "GET"),
    (
        re.compile(r"^agents/[^/]+/(approve-tool-call|decline-tool-call|resume|decide-many)$"),
        "POST",
    ),
    (re.compile(r"^openapi\.json$"), "GET"),
    (re.compile(r"^gate$"), "POST"),
    *((re.compile(pattern), method) for pattern, method in (*GRANT_ROUTES, EXTEND_ROUTE)),
]


def _allowed_methods(tail: str) -> set[str]:
    return {method for pattern, method in _ROUTES if pattern.match(tail)}
